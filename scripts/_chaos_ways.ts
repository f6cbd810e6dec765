// The chaos run's inbound deliveries: signed Telegram, Slack, Discord, GitHub and generic-webhook requests (the other five platforms' in _chaos_new_ways.ts), and bad ones for every way; Deno.
import { signGithubPayload } from "../lib/platforms/github.ts";
import { signSlackRequest } from "../lib/platforms/slack.ts";
import { signStandardWebhook } from "../lib/standard_webhooks.ts";
import {
  type DiscordTestKeys,
  discordTestKeys,
  signDiscordRequest,
} from "../test/_support/discord_signer.ts";
import { CHAOS_CREDENTIALS } from "./_chaos_fakes.ts";
import { isNewPlatformWay } from "./_chaos_new_platforms.ts";
import {
  newPlatformRequest,
  type NewPlatformSecrets,
  newPlatformSecrets,
  type PublishedKeys,
} from "./_chaos_new_ways.ts";
import {
  type ChaosBadDelivery,
  type ChaosMessage,
  type ChaosSession,
  discordInteractionId,
  GITHUB_REPO,
  SLACK_TEAM,
  slackTs,
} from "./_chaos_plan.ts";

/** The secrets baton is started with and the senders sign with. */
export interface ChaosSecrets {
  apiKey: string;
  webhook: string;
  telegram: string;
  slack: string;
  github: string;
  discord: DiscordTestKeys;
  /** WhatsApp, LINE, Twilio, Teams and Google Chat. */
  more: NewPlatformSecrets;
}

/** Fresh secrets for one run (Discord's Ed25519 pair; Teams' and Chat's RSA keys, in `keys`). */
export async function chaosSecrets(keys: PublishedKeys): Promise<ChaosSecrets> {
  return {
    apiKey: "chaos-gateway-key",
    webhook: "whsec_" + btoa("baton-chaos-webhook-secret-32byt"),
    telegram: "chaos-telegram-secret",
    slack: "chaos-slack-signing-secret-0123456789",
    github: "chaos-github-webhook-secret",
    discord: await discordTestKeys(),
    more: await newPlatformSecrets(keys),
  };
}

/** The vars that let baton verify what the senders sign. */
export function inboundVars(secrets: ChaosSecrets): Record<string, string> {
  return {
    GATEWAY_API_KEY: secrets.apiKey,
    WEBHOOK_SECRET: secrets.webhook,
    TELEGRAM_WEBHOOK_SECRET: secrets.telegram,
    SLACK_SIGNING_SECRET: secrets.slack,
    DISCORD_PUBLIC_KEY: secrets.discord.publicKeyHex,
    GITHUB_WEBHOOK_SECRET: secrets.github,
    GITHUB_BOT_LOGIN: "batonbot",
    ...secrets.more.vars,
  };
}

const _now = () => Math.floor(Date.now() / 1000);
const _json = { "content-type": "application/json" };

/** The signed delivery of a good message (built for every attempt; a `redelivery` as sent again). */
export async function inboundRequest(
  url: string,
  secrets: ChaosSecrets,
  message: ChaosMessage,
  redelivery = false,
): Promise<Request> {
  const { session } = message;
  if (isNewPlatformWay(session.way)) {
    return await newPlatformRequest(url, secrets.more, message, { redelivery });
  }
  switch (session.way) {
    case "telegram":
      return _telegram(url, secrets.telegram, JSON.stringify(_telegramUpdate(message)));
    case "slack":
      return await _slack(url, secrets.slack, JSON.stringify(_slackCallback(message)));
    case "discord":
      return await _discord(url, secrets, JSON.stringify(_interaction(message)));
    case "github":
      return await _github(url, secrets.github, JSON.stringify(_comment(message)), message.marker);
    case "webhook":
      return await _webhook(url, secrets.webhook, _webhookBody(session, message.text), message);
    default:
      throw new Error(`no inbound delivery for ${session.way}`);
  }
}

/** The Discord interaction token of a message (its reply's webhook path names it). */
export function discordToken(message: ChaosMessage): string {
  return `chaos-token-${discordInteractionId(message)}`;
}

function _telegramUpdate(m: ChaosMessage) {
  return {
    update_id: m.updateId,
    message: {
      message_id: m.k + 1,
      date: _now(),
      chat: { id: m.session.chatId, type: "private", first_name: "Chaos" },
      from: { id: m.session.chatId, is_bot: false, first_name: "Chaos" },
      text: m.text,
    },
  };
}

function _slackCallback(m: ChaosMessage) {
  const { session } = m;
  const ts = slackTs(m);
  const user = `U${session.chatId}`;
  const event = session.slackKind === "dm"
    ? { type: "message", user, text: m.text, ts, channel: session.channel, channel_type: "im" }
    : {
      type: "app_mention",
      user,
      text: m.text,
      ts,
      event_ts: ts,
      channel: session.channel,
      ...(session.threadTs && session.threadTs !== ts ? { thread_ts: session.threadTs } : {}),
    };
  return {
    token: "legacy",
    team_id: SLACK_TEAM,
    api_app_id: "A0CHAOS",
    type: "event_callback",
    event_id: `Ev${m.updateId}`,
    event_time: _now(),
    authorizations: [{ team_id: SLACK_TEAM, user_id: "UBATON", is_bot: true }],
    event,
  };
}

function _interaction(m: ChaosMessage) {
  const id = discordInteractionId(m);
  return {
    id,
    type: 2,
    application_id: CHAOS_CREDENTIALS.discordApp,
    token: discordToken(m),
    channel_id: m.session.channel,
    channel: { id: m.session.channel, name: "chaos", type: 0 },
    guild_id: "1400000000000000042",
    member: {
      user: { id: String(1_500_000_000 + m.session.chatId), username: "chaos" },
      roles: [],
    },
    data: {
      id: "1600000000000000042",
      name: "ask",
      type: 1,
      options: [{ name: "prompt", type: 3, value: m.text }],
    },
  };
}

function _comment(m: ChaosMessage) {
  return {
    action: "created",
    issue: { number: m.session.chatId, title: "Chaos" },
    comment: {
      id: 100_000 + m.updateId,
      body: m.text,
      user: { login: `chaos-${m.session.index}`, id: m.session.chatId, type: "User" },
      author_association: "OWNER",
    },
    repository: {
      id: 1,
      name: "chaos-repo",
      full_name: GITHUB_REPO,
      owner: { login: "chaos-org" },
    },
    sender: { login: `chaos-${m.session.index}`, id: m.session.chatId },
  };
}

function _webhookBody(session: ChaosSession, text: string): string {
  return JSON.stringify({ session: session.name, text, user: `u${session.index}` });
}

function _telegram(url: string, secret: string | null, body: string): Request {
  const headers: Record<string, string> = { ..._json };
  if (secret !== null) headers["x-telegram-bot-api-secret-token"] = secret;
  return new Request(`${url}/webhooks/telegram`, { method: "POST", headers, body });
}

async function _slack(
  url: string,
  secret: string | null,
  body: string,
  opts: { timestamp?: number; sent?: string } = {},
): Promise<Request> {
  const timestamp = opts.timestamp ?? _now();
  const headers: Record<string, string> = {
    ..._json,
    "x-slack-request-timestamp": String(timestamp),
  };
  if (secret !== null) {
    headers["x-slack-signature"] = await signSlackRequest({ secret, timestamp, body });
  }
  return new Request(`${url}/webhooks/slack`, { method: "POST", headers, body: opts.sent ?? body });
}

async function _discord(
  url: string,
  secrets: ChaosSecrets,
  body: string,
  opts: { timestamp?: number; key?: CryptoKey | null; sent?: string } = {},
): Promise<Request> {
  const timestamp = String(opts.timestamp ?? _now());
  const headers: Record<string, string> = { ..._json, "x-signature-timestamp": timestamp };
  const key = opts.key === undefined ? secrets.discord.privateKey : opts.key;
  if (key) {
    headers["x-signature-ed25519"] = await signDiscordRequest({ privateKey: key, timestamp, body });
  }
  return new Request(`${url}/webhooks/discord`, {
    method: "POST",
    headers,
    body: opts.sent ?? body,
  });
}

async function _github(
  url: string,
  secret: string | null,
  body: string,
  delivery: string,
  sent?: string,
): Promise<Request> {
  const headers: Record<string, string> = {
    ..._json,
    "user-agent": "GitHub-Hookshot/chaos",
    "x-github-event": "issue_comment",
    // GitHub keeps a delivery's GUID when it is redelivered.
    "x-github-delivery": `chaos-${delivery}`,
  };
  if (secret !== null) headers["x-hub-signature-256"] = await signGithubPayload(secret, body);
  return new Request(`${url}/webhooks/github`, { method: "POST", headers, body: sent ?? body });
}

async function _webhook(
  url: string,
  secret: string | null,
  body: string,
  m: { marker: string; session: ChaosSession },
  opts: { timestamp?: number; sent?: string } = {},
): Promise<Request> {
  const id = `msg_${m.session.name}_${m.marker}`;
  const timestamp = opts.timestamp ?? _now();
  const headers: Record<string, string> = {
    ..._json,
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
  };
  if (secret !== null) {
    headers["webhook-signature"] = await signStandardWebhook({ secret, id, timestamp, body });
  }
  return new Request(`${url}/webhooks/generic`, {
    method: "POST",
    headers,
    body: opts.sent ?? body,
  });
}

/** A bad delivery of `bad.what` for its session's way; it must be refused with a 4xx, never run. */
export async function badRequest(
  url: string,
  secrets: ChaosSecrets,
  bad: ChaosBadDelivery,
): Promise<Request> {
  const { session, marker, what } = bad;
  const text = `[tag:s${session.index}] ${marker}`;
  // A stand-in message for the payload builders: the bad marker in place of a good one.
  const n = Number(marker.slice(3));
  const fake = {
    session,
    k: 900_000 + n,
    marker,
    text: session.way === "github" ? `@batonbot ${text}` : text,
    updateId: 900_000_000 + n,
  } as ChaosMessage;
  const truncate = (s: string) => s.slice(0, Math.floor(s.length / 2));
  const stale = _now() - 600;
  const other = "not-the-secret-of-this-gateway!!";
  if (isNewPlatformWay(session.way)) {
    return await newPlatformRequest(url, secrets.more, fake, { bad: what });
  }
  switch (session.way) {
    case "telegram": {
      const update = _telegramUpdate(fake);
      let body = JSON.stringify(update);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...update, message: { ...update.message, chat: marker, text: 5 } });
      }
      if (what === "truncated body") body = truncate(body);
      const secret = what === "no secret"
        ? null
        : what === "wrong secret"
        ? other
        : secrets.telegram;
      return _telegram(url, secret, body);
    }
    case "slack": {
      const callback = _slackCallback(fake);
      let body = JSON.stringify(callback);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...callback, event: { ...callback.event, text: 5, channel: [1] } });
      }
      const secret = what === "unsigned" ? null : what === "bad signature" ? other : secrets.slack;
      const timestamp = what === "stale timestamp" ? stale : undefined;
      return await _slack(url, secret, body, {
        timestamp,
        sent: what === "truncated body" ? truncate(body) : body,
      });
    }
    case "discord": {
      const interaction = _interaction(fake);
      let body = JSON.stringify(interaction);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...interaction, type: "2", data: { options: 7 } });
      }
      const wrongKey = what === "bad signature" ? (await discordTestKeys()).privateKey : undefined;
      const key = what === "unsigned" ? null : wrongKey;
      return await _discord(url, secrets, body, {
        timestamp: what === "stale timestamp" ? stale : undefined,
        key,
      });
    }
    case "github": {
      const comment = _comment(fake);
      let body = JSON.stringify(comment);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...comment, issue: { number: "x" }, comment: { body: 5 } });
      }
      const secret = what === "unsigned" ? null : what === "bad signature" ? other : secrets.github;
      return await _github(
        url,
        secret,
        body,
        marker,
        what === "truncated body" ? truncate(body) : body,
      );
    }
    case "webhook": {
      let body = _webhookBody(session, text);
      if (what === "malformed JSON") body = `{"session": "${session.name}", "text": "${marker}`;
      if (what === "wrong types") {
        body = JSON.stringify({ session: [session.name], text: 7, marker });
      }
      const secret = what === "unsigned"
        ? null
        : what === "bad signature"
        ? "whsec_" + btoa(other)
        : secrets.webhook;
      return await _webhook(url, secret, body, bad, {
        timestamp: what === "stale timestamp" ? stale : undefined,
        sent: what === "truncated body" ? truncate(body) : body,
      });
    }
    case "chat": {
      const headers: Record<string, string> = {
        ..._json,
        authorization: `Bearer ${secrets.apiKey}`,
      };
      let body = JSON.stringify({ model: "chaos", messages: [{ role: "user", content: text }] });
      if (what === "no key") delete headers.authorization;
      if (what === "wrong key") headers.authorization = "Bearer not-the-key";
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") body = JSON.stringify({ model: "chaos", messages: text });
      if (what === "bad session id") headers["x-session-id"] = `bad id ${marker}!`;
      return new Request(`${url}/v1/chat/completions`, { method: "POST", headers, body });
    }
    case "runs": {
      const headers: Record<string, string> = {
        ..._json,
        authorization: `Bearer ${secrets.apiKey}`,
      };
      if (what === "unknown run" || what === "bad run id") {
        const id = what === "bad run id"
          ? `run_${marker}!`
          : `run_${btoa(`nobody-${marker}`).replace(/=+$/, "")}_7`;
        return new Request(`${url}/v1/runs/${encodeURIComponent(id)}/events`, { headers });
      }
      let body = JSON.stringify({ input: text, session: session.name });
      if (what === "no key") delete headers.authorization;
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") body = JSON.stringify({ input: 5, session: [marker] });
      if (what === "empty input") body = JSON.stringify({ input: "", session: session.name });
      return new Request(`${url}/v1/runs`, { method: "POST", headers, body });
    }
  }
}

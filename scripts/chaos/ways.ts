// The chaos run's inbound deliveries: Telegram, Slack, Discord, GitHub and generic-webhook requests shaped and signed by the platforms' drivers with the run's credentials (the other five platforms' in new_ways.ts), and bad ones for every way; Deno.
import {
  type DiscordCredentials,
  discordDriver,
  discordInteractionToken,
  discordKeyPair,
} from "../../test/_support/drivers/discord.ts";
import { genericDriver } from "../../test/_support/drivers/generic.ts";
import { githubDriver } from "../../test/_support/drivers/github.ts";
import type { Post } from "../../test/_support/drivers/mod.ts";
import { slackDriver } from "../../test/_support/drivers/slack.ts";
import { telegramDriver } from "../../test/_support/drivers/telegram.ts";
import { isNewPlatformWay } from "./new_platforms.ts";
import { photoUpdate } from "./media.ts";
import {
  newPlatformRequest,
  type NewPlatformSecrets,
  newPlatformSecrets,
  plain,
  type PublishedKeys,
  signedRequest,
} from "./new_ways.ts";
import { type ChaosBadDelivery, type ChaosMessage, discordInteractionId, slackTs } from "./plan.ts";

/** The secrets baton is started with and the senders sign with. */
export interface ChaosSecrets {
  apiKey: string;
  webhook: string;
  telegram: string;
  slack: string;
  github: string;
  discord: DiscordCredentials & { publicKeyHex: string };
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
    discord: await discordKeyPair(),
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
  const post = _post(message);
  switch (session.way) {
    case "telegram":
      return await signedRequest(
        url,
        telegramDriver,
        JSON.stringify(photoUpdate(telegramDriver.shape(post), message)),
        { secret: secrets.telegram },
      );
    case "slack":
      return await signedRequest(url, slackDriver, _body(slackDriver, post), {
        secret: secrets.slack,
      });
    case "discord":
      return await signedRequest(url, discordDriver, _body(discordDriver, post), secrets.discord);
    case "github":
      // GitHub keeps a delivery's GUID when it is redelivered.
      return await signedRequest(url, githubDriver, _body(githubDriver, post), {
        secret: secrets.github,
      }, { id: `chaos-${message.marker}` });
    case "webhook":
      return await signedRequest(url, genericDriver, _body(genericDriver, post), {
        secret: secrets.webhook,
      }, { id: _webhookId(message) });
    default:
      throw new Error(`no inbound delivery for ${session.way}`);
  }
}

/** The Discord interaction token of a message (its reply's webhook path names it). */
export function discordToken(message: ChaosMessage): string {
  return discordInteractionToken(message.session.channel!, discordInteractionId(message));
}

/** Who sends `m` and where, as the drivers' shapes take it (the text already holds any mention). */
function _post(m: ChaosMessage): Post {
  const { session } = m;
  const name = `chaos-${session.index}`;
  switch (session.way) {
    case "telegram":
      return {
        chat: String(session.chatId),
        text: m.text,
        id: String(m.k + 1),
        event: String(m.updateId),
        from: { id: String(session.chatId), name },
      };
    case "slack":
      return {
        chat: session.channel!,
        text: m.text,
        id: slackTs(m),
        event: `Ev${m.updateId}`,
        from: { id: `U${session.chatId}`, name },
        group: session.slackKind !== "dm",
        ...(session.threadTs ? { thread: session.threadTs } : {}),
      };
    case "discord":
      return {
        chat: session.channel!,
        text: m.text,
        id: discordInteractionId(m),
        from: { id: String(1_500_000_000 + session.chatId), name },
      };
    case "github":
      return {
        chat: String(session.chatId),
        text: m.text,
        id: String(100_000 + m.updateId),
        from: { id: String(session.chatId), name },
      };
    default:
      return { chat: session.name, text: m.text, id: "", from: { id: `u${session.index}`, name } };
  }
}

/** The JSON body of `post` in `driver`'s shape. */
function _body(driver: { shape(post: Post): object }, post: Post): string {
  return JSON.stringify(driver.shape(post));
}

/** The webhook-id of a generic delivery (the same on every retry of it). */
function _webhookId(m: { marker: string; session: { name: string } }): string {
  return `msg_${m.session.name}_${m.marker}`;
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
      const update = plain(telegramDriver.shape(_post(fake)));
      let body = JSON.stringify(update);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...update, message: { ...update.message, chat: marker, text: 5 } });
      }
      if (what === "truncated body") body = truncate(body);
      const secret = what === "no secret" ? null : {
        secret: what === "wrong secret" ? other : secrets.telegram,
      };
      return await signedRequest(url, telegramDriver, body, secret);
    }
    case "slack": {
      const callback = plain(slackDriver.shape(_post(fake)));
      let body = JSON.stringify(callback);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...callback, event: { ...callback.event, text: 5, channel: [1] } });
      }
      const secret = what === "unsigned" ? null : {
        secret: what === "bad signature" ? other : secrets.slack,
      };
      return await signedRequest(url, slackDriver, body, secret, {
        at: what === "stale timestamp" ? stale : undefined,
      }, what === "truncated body" ? truncate(body) : body);
    }
    case "discord": {
      const interaction = plain(discordDriver.shape(_post(fake)));
      let body = JSON.stringify(interaction);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...interaction, type: "2", data: { options: 7 } });
      }
      const key = what === "unsigned"
        ? null
        : what === "bad signature"
        ? await discordKeyPair()
        : secrets.discord;
      return await signedRequest(url, discordDriver, body, key, {
        at: what === "stale timestamp" ? stale : undefined,
      });
    }
    case "github": {
      const comment = plain(githubDriver.shape(_post(fake)));
      let body = JSON.stringify(comment);
      if (what === "malformed JSON") body = body.replace(/}$/, "");
      if (what === "wrong types") {
        body = JSON.stringify({ ...comment, issue: { number: "x" }, comment: { body: 5 } });
      }
      const secret = what === "unsigned" ? null : {
        secret: what === "bad signature" ? other : secrets.github,
      };
      return await signedRequest(
        url,
        githubDriver,
        body,
        secret,
        { id: `chaos-${marker}` },
        what === "truncated body" ? truncate(body) : body,
      );
    }
    case "webhook": {
      let body = _body(genericDriver, _post(fake));
      if (what === "malformed JSON") body = `{"session": "${session.name}", "text": "${marker}`;
      if (what === "wrong types") {
        body = JSON.stringify({ session: [session.name], text: 7, marker });
      }
      const secret = what === "unsigned" ? null : {
        secret: what === "bad signature" ? "whsec_" + btoa(other) : secrets.webhook,
      };
      return await signedRequest(url, genericDriver, body, secret, {
        id: _webhookId(bad),
        at: what === "stale timestamp" ? stale : undefined,
      }, what === "truncated body" ? truncate(body) : body);
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

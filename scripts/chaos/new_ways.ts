// The chaos run's WhatsApp, LINE, Twilio, Teams and Google Chat deliveries: shaped and signed by the platforms' drivers with the run's credentials, good and bad, redeliveries in the platform's shape; Deno.
import type { webhook } from "@line/bot-sdk";
import type { JWK } from "jose";
import { type TestSigningKey, testSigningKey } from "../../lib/platforms/_jwt_fixtures.ts";
import { googleChatDriver } from "../../test/_support/drivers/google_chat.ts";
import { lineDriver, lineRedelivery } from "../../test/_support/drivers/line.ts";
import {
  type Driver,
  encode,
  type Post,
  type SignOptions,
} from "../../test/_support/drivers/mod.ts";
import { type TeamsCredentials, teamsDriver } from "../../test/_support/drivers/teams.ts";
import { twilioDriver } from "../../test/_support/drivers/twilio.ts";
import { whatsappDriver } from "../../test/_support/drivers/whatsapp.ts";
import type { ChaosMessage } from "./plan.ts";
import {
  NEW_CREDENTIALS,
  newPlatformChat,
  platformMessageId,
  replyLinkOf,
} from "./new_platforms.ts";

/** Key sets the fakes publish (Teams' OpenID metadata names one, Chat's JWKS URL the other). */
export interface PublishedKeys {
  teams: { keys: JWK[] };
  google: { keys: JWK[] };
  /** The fake Bot Connector: every activity names it as its serviceUrl. */
  teamsServiceUrl: string;
}

/** Signing keys of the Bot Framework and Google Chat, and keys nobody published (bad deliveries). */
export interface NewPlatformSecrets {
  teams: TestSigningKey;
  google: TestSigningKey;
  /** Same key ids as the published ones, other keys: a forged signature. */
  strangerTeams: TestSigningKey;
  strangerGoogle: TestSigningKey;
  teamsServiceUrl: string;
  /** The vars that let baton verify what the five senders sign. */
  vars: Record<string, string>;
}

/** Fresh signing keys for one run, their public halves published on the fakes' key sets. */
export async function newPlatformSecrets(published: PublishedKeys): Promise<NewPlatformSecrets> {
  const teams = await testSigningKey("chaos-bf-1", { endorsements: ["msteams"] });
  const google = await testSigningKey("chaos-chat-1");
  published.teams.keys.push(teams.jwk);
  published.google.keys.push(google.jwk);
  return {
    teams,
    google,
    strangerTeams: await testSigningKey("chaos-bf-1", { endorsements: ["msteams"] }),
    strangerGoogle: await testSigningKey("chaos-chat-1"),
    teamsServiceUrl: published.teamsServiceUrl,
    vars: _inboundVars(),
  };
}

function _inboundVars(): Record<string, string> {
  const C = NEW_CREDENTIALS;
  return {
    WHATSAPP_APP_SECRET: C.whatsappSecret,
    WHATSAPP_VERIFY_TOKEN: "chaos-whatsapp-verify-token",
    WHATSAPP_PHONE_NUMBER_ID: C.whatsappPhoneId,
    LINE_CHANNEL_SECRET: C.lineSecret,
    TWILIO_ACCOUNT_SID: C.twilioSid,
    TWILIO_AUTH_TOKEN: C.twilioToken,
    PUBLIC_URL: C.publicUrl,
    TEAMS_APP_ID: C.teamsAppId,
    GOOGLE_CHAT_AUDIENCE: C.googleAudience,
  };
}

/** The headers that vouch for a body: a signature, a secret token, a bearer token. */
const _VOUCHING = new Set([
  "x-telegram-bot-api-secret-token",
  "x-slack-signature",
  "x-signature-ed25519",
  "x-hub-signature-256",
  "webhook-signature",
  "x-line-signature",
  "x-twilio-signature",
  "authorization",
]);

/**
 * A POST of `body` to `driver`'s route at `url`, signed by the driver with `credentials` (null:
 * unsigned, the platform's other headers kept); `sent` is what goes on the wire when it is not
 * what was signed (a body cut short after signing).
 */
export async function signedRequest<C>(
  url: string,
  driver: Driver<C>,
  body: string,
  credentials: C | null,
  options: SignOptions = {},
  sent = body,
): Promise<Request> {
  const signed = await driver.sign(body, credentials ?? driver.stranger, options);
  const headers = credentials === null
    ? Object.fromEntries(Object.entries(signed).filter(([k]) => !_VOUCHING.has(k)))
    : signed;
  return new Request(`${url}${driver.path}`, { method: "POST", headers, body: sent });
}

/** A driver's shape as plain JSON objects, for the bad deliveries that take it apart. */
// deno-lint-ignore no-explicit-any
export function plain(shape: object): Record<string, any> {
  return JSON.parse(JSON.stringify(shape));
}

const _now = () => Math.floor(Date.now() / 1000);
const _OTHER = "not-the-secret-of-this-platform!";

/** Who sends `m` and where, as the drivers' shapes take it. */
function _post(m: ChaosMessage, secrets: NewPlatformSecrets): Post {
  const { session } = m;
  const chat = newPlatformChat(session);
  const id = platformMessageId(m);
  switch (session.way) {
    case "whatsapp":
      return { chat, text: m.text, id, from: { id: chat, name: "Chaos" } };
    case "line":
      // The message id apart from the webhook event id, which every redelivery keeps.
      return { chat, text: m.text, id: String(m.updateId), event: id };
    case "twilio":
      return { chat, text: m.text, id };
    case "teams":
      return {
        chat,
        text: m.text,
        id,
        from: { id: `29:1chaos-${session.chatId}`, name: "Chaos" },
        serviceUrl: secrets.teamsServiceUrl,
      };
    default:
      return {
        chat,
        text: m.text,
        id,
        from: { id: `users/${session.chatId}`, name: "Chaos" },
        thread: replyLinkOf(m),
      };
  }
}

function _teams(secrets: NewPlatformSecrets): TeamsCredentials {
  return {
    key: secrets.teams,
    audience: NEW_CREDENTIALS.teamsAppId,
    serviceUrl: secrets.teamsServiceUrl,
  };
}

const _google = (secrets: NewPlatformSecrets) => ({
  key: secrets.google,
  audience: NEW_CREDENTIALS.googleAudience,
});

/**
 * The signed delivery of a message on one of the five (built again for every attempt): a good one,
 * where a `redelivery` is in the platform's own shape (LINE marks it `isRedelivery` and keeps the
 * event id; the others repeat the message id), or a `bad` one of that kind for the stand-in
 * message `m` (see `badRequest`).
 */
export async function newPlatformRequest(
  url: string,
  secrets: NewPlatformSecrets,
  m: ChaosMessage,
  how: { redelivery: boolean } | { bad: string },
): Promise<Request> {
  if ("bad" in how) return await _badRequest(url, secrets, m, how.bad);
  const post = _post(m, secrets);
  const C = NEW_CREDENTIALS;
  switch (m.session.way) {
    case "whatsapp":
      return await signedRequest(url, whatsappDriver, _body(whatsappDriver, post), {
        secret: C.whatsappSecret,
      });
    case "line": {
      const callback = lineDriver.shape(post) as webhook.CallbackRequest;
      const body = JSON.stringify(how.redelivery ? lineRedelivery(callback) : callback);
      return await signedRequest(url, lineDriver, body, { secret: C.lineSecret });
    }
    case "twilio":
      return await signedRequest(
        url,
        twilioDriver,
        encode(twilioDriver, twilioDriver.shape(post)),
        { token: C.twilioToken, url: `${C.publicUrl}/webhooks/twilio` },
      );
    case "teams":
      return await signedRequest(url, teamsDriver, _body(teamsDriver, post), _teams(secrets));
    default:
      return await signedRequest(
        url,
        googleChatDriver,
        _body(googleChatDriver, post),
        _google(secrets),
      );
  }
}

/** The JSON body of `post` in `driver`'s shape. */
function _body(driver: { shape(post: Post): object }, post: Post): string {
  return JSON.stringify(driver.shape(post));
}

async function _badRequest(
  url: string,
  secrets: NewPlatformSecrets,
  m: ChaosMessage,
  what: string,
): Promise<Request> {
  const way = m.session.way;
  const post = _post(m, secrets);
  const C = NEW_CREDENTIALS;
  const truncate = (s: string) => s.slice(0, Math.floor(s.length / 2));
  const broken = (s: string) => s.replace(/}$/, "");
  if (way === "whatsapp" || way === "line") {
    const driver = way === "whatsapp" ? whatsappDriver : lineDriver;
    let body = _body(driver, post);
    if (what === "malformed JSON") body = broken(body);
    if (what === "wrong types") {
      body = JSON.stringify(
        way === "whatsapp"
          ? { object: "whatsapp_business_account", entry: [{ changes: [{ value: [m.marker] }] }] }
          : { events: [{ type: "message", source: 5, message: { text: m.marker } }] },
      );
    }
    if (what === "another number") {
      body = body.replace(`"${C.whatsappPhoneId}"`, '"106540352240000"');
    }
    const secret = what === "unsigned" ? null : {
      secret: what === "bad signature"
        ? _OTHER
        : way === "whatsapp"
        ? C.whatsappSecret
        : C.lineSecret,
    };
    return await signedRequest(
      url,
      driver,
      body,
      secret,
      {},
      what === "truncated body" ? truncate(body) : body,
    );
  }
  if (way === "twilio") {
    const form = plain(twilioDriver.shape(post));
    if (what === "another account") form.AccountSid = "AC" + "0".repeat(32);
    const body = encode(twilioDriver, form);
    const token = what === "unsigned" ? null : {
      token: what === "bad signature" ? _OTHER : C.twilioToken,
      url: what === "wrong URL signed"
        ? `${url}/webhooks/twilio`
        : `${C.publicUrl}/webhooks/twilio`,
    };
    return await signedRequest(
      url,
      twilioDriver,
      body,
      token,
      {},
      what === "truncated body" ? truncate(body) : body,
    );
  }
  const teams = way === "teams";
  const payload = plain((teams ? teamsDriver : googleChatDriver).shape(post));
  let body = JSON.stringify(payload);
  if (what === "malformed JSON") body = broken(body);
  if (what === "wrong types") {
    body = JSON.stringify(
      teams
        ? { ...payload, from: 5, conversation: [m.marker] }
        : { type: "MESSAGE", space: 7, message: { text: m.marker } },
    );
  }
  const base = teams ? _teams(secrets) : _google(secrets);
  const credentials = {
    ...base,
    ...(what === "bad signature"
      ? { key: teams ? secrets.strangerTeams : secrets.strangerGoogle }
      : {}),
    ...(what === "wrong audience" ? { audience: "someone-else" } : {}),
    ...(what === "wrong issuer" ? { issuer: "mallory@example.iam.gserviceaccount.com" } : {}),
    ...(what === "wrong serviceUrl" ? { serviceUrl: "https://evil.example/teams/" } : {}),
    ...(what === "unknown key" ? { kid: "chaos-never-published" } : {}),
  };
  const options = what === "expired token" ? { at: _now() - 7_200 } : {};
  const signed = what === "unsigned" ? null : credentials;
  return teams
    ? await signedRequest(url, teamsDriver, body, signed, options)
    : await signedRequest(url, googleChatDriver, body, signed, options);
}

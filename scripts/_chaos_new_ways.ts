// The chaos run's WhatsApp, LINE, Twilio, Teams and Google Chat deliveries: signed as each platform signs, good and bad, redeliveries in the platform's shape; Deno.
import type { JWK } from "jose";
import { GOOGLE_CHAT_ISSUER } from "../lib/platforms/google_chat.ts";
import { signLinePayload } from "../lib/platforms/line.ts";
import { TEAMS_ISSUER } from "../lib/platforms/teams.ts";
import { signTwilioRequest } from "../lib/platforms/twilio.ts";
import { signWhatsappPayload } from "../lib/platforms/whatsapp.ts";
import {
  signTestJwt,
  type TestClaims,
  type TestSigningKey,
  testSigningKey,
} from "../lib/platforms/_jwt_fixtures.ts";
import type { ChaosMessage } from "./_chaos_plan.ts";
import {
  NEW_CREDENTIALS,
  newPlatformChat,
  platformMessageId,
  replyLinkOf,
} from "./_chaos_new_platforms.ts";

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

const _now = () => Math.floor(Date.now() / 1000);
const _json = { "content-type": "application/json" };
const _OTHER = "not-the-secret-of-this-platform!";

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
  switch (m.session.way) {
    case "whatsapp":
      return await _hmac(url, "whatsapp", JSON.stringify(_whatsapp(m)));
    case "line":
      return await _hmac(url, "line", JSON.stringify(_line(m, how.redelivery)));
    case "twilio":
      return await _twilio(url, _sms(m));
    case "teams":
      return await _jwt(url, "teams", secrets.teams, _teamsClaims(secrets), _activity(m, secrets));
    default:
      return await _jwt(url, "google-chat", secrets.google, _googleClaims(), _chatEvent(m));
  }
}

async function _badRequest(
  url: string,
  secrets: NewPlatformSecrets,
  m: ChaosMessage,
  what: string,
): Promise<Request> {
  const way = m.session.way;
  const truncate = (s: string) => s.slice(0, Math.floor(s.length / 2));
  const broken = (s: string) => s.replace(/}$/, "");
  if (way === "whatsapp" || way === "line") {
    const payload = way === "whatsapp" ? _whatsapp(m) : _line(m, false);
    let body = JSON.stringify(payload);
    if (what === "malformed JSON") body = broken(body);
    if (what === "wrong types") {
      body = JSON.stringify(
        way === "whatsapp"
          ? { object: "whatsapp_business_account", entry: [{ changes: [{ value: [m.marker] }] }] }
          : { events: [{ type: "message", source: 5, message: { text: m.marker } }] },
      );
    }
    if (what === "another number") {
      body = body.replace(`"${NEW_CREDENTIALS.whatsappPhoneId}"`, '"106540352240000"');
    }
    const secret = what === "unsigned" ? null : what === "bad signature" ? _OTHER : undefined;
    return await _hmac(url, way, body, {
      secret,
      sent: what === "truncated body" ? truncate(body) : body,
    });
  }
  if (way === "twilio") {
    const params = _sms(m);
    if (what === "another account") params.set("AccountSid", "AC" + "0".repeat(32));
    return await _twilio(url, params, {
      token: what === "bad signature" ? _OTHER : what === "unsigned" ? null : undefined,
      signedUrl: what === "wrong URL signed" ? `${url}/webhooks/twilio` : undefined,
      sent: what === "truncated body" ? truncate(params.toString()) : undefined,
    });
  }
  const teams = way === "teams";
  const payload = teams ? _activity(m, secrets) : _chatEvent(m);
  let body = JSON.stringify(payload);
  if (what === "malformed JSON") body = broken(body);
  if (what === "wrong types") {
    body = JSON.stringify(
      teams
        ? { ...payload, from: 5, conversation: [m.marker] }
        : { type: "MESSAGE", space: 7, message: { text: m.marker } },
    );
  }
  const claims = teams ? _teamsClaims(secrets) : _googleClaims();
  if (what === "wrong audience") claims.audience = "someone-else";
  if (what === "wrong issuer") claims.issuer = "mallory@example.iam.gserviceaccount.com";
  if (what === "expired token") Object.assign(claims, { now: _now() - 7_200, lifetime: 600 });
  if (what === "wrong serviceUrl") claims.claims = { serviceurl: "https://evil.example/teams/" };
  if (what === "unknown key") claims.kid = "chaos-never-published";
  const key = what === "bad signature"
    ? (teams ? secrets.strangerTeams : secrets.strangerGoogle)
    : teams
    ? secrets.teams
    : secrets.google;
  return await _jwt(
    url,
    teams ? "teams" : "google-chat",
    what === "unsigned" ? null : key,
    claims,
    body,
  );
}

function _whatsapp(m: ChaosMessage) {
  const customer = String(m.session.chatId);
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: "15550783881",
            phone_number_id: NEW_CREDENTIALS.whatsappPhoneId,
          },
          contacts: [{ profile: { name: "Chaos" }, wa_id: customer }],
          messages: [{
            from: customer,
            id: platformMessageId(m),
            timestamp: String(_now()),
            type: "text",
            text: { body: m.text },
          }],
        },
      }],
    }],
  };
}

function _line(m: ChaosMessage, redelivery: boolean) {
  return {
    destination: "Ubotchaos",
    events: [{
      type: "message",
      mode: "active",
      timestamp: Date.now(),
      webhookEventId: platformMessageId(m),
      deliveryContext: { isRedelivery: redelivery },
      source: { type: "user", userId: newPlatformChat(m.session) },
      replyToken: "chaos-reply-token",
      message: { type: "text", id: String(m.updateId), quoteToken: "q", text: m.text },
    }],
  };
}

function _sms(m: ChaosMessage): URLSearchParams {
  const sid = platformMessageId(m);
  return new URLSearchParams({
    ToCountry: "US",
    SmsMessageSid: sid,
    NumMedia: "0",
    SmsSid: sid,
    SmsStatus: "received",
    Body: m.text,
    To: NEW_CREDENTIALS.twilioNumber,
    NumSegments: "1",
    MessageSid: sid,
    AccountSid: NEW_CREDENTIALS.twilioSid,
    From: newPlatformChat(m.session),
    ApiVersion: "2010-04-01",
  });
}

function _activity(m: ChaosMessage, secrets: NewPlatformSecrets) {
  return {
    type: "message",
    id: platformMessageId(m),
    timestamp: new Date().toISOString(),
    serviceUrl: secrets.teamsServiceUrl,
    channelId: "msteams",
    from: {
      id: `29:1chaos-${m.session.chatId}`,
      name: "Chaos",
      aadObjectId: `aad-${m.session.chatId}`,
    },
    conversation: { id: newPlatformChat(m.session), conversationType: "personal", tenantId: "t1" },
    recipient: { id: `28:${NEW_CREDENTIALS.teamsAppId}`, name: "baton" },
    text: m.text,
    textFormat: "plain",
  };
}

function _chatEvent(m: ChaosMessage) {
  const space = newPlatformChat(m.session);
  const user = { name: `users/${m.session.chatId}`, displayName: "Chaos", type: "HUMAN" };
  return {
    type: "MESSAGE",
    eventTime: new Date().toISOString(),
    space: { name: space, type: "DM", spaceType: "DIRECT_MESSAGE", singleUserBotDm: true },
    message: {
      name: platformMessageId(m),
      sender: user,
      text: m.text,
      argumentText: m.text,
      thread: { name: replyLinkOf(m) },
    },
    user,
  };
}

function _teamsClaims(secrets: NewPlatformSecrets): TestClaims {
  return {
    issuer: TEAMS_ISSUER,
    audience: NEW_CREDENTIALS.teamsAppId,
    claims: { serviceurl: secrets.teamsServiceUrl },
  };
}

function _googleClaims(): TestClaims {
  return { issuer: GOOGLE_CHAT_ISSUER, audience: NEW_CREDENTIALS.googleAudience };
}

/** A WhatsApp or LINE delivery, signed over `body` with the app or channel secret (or `secret`). */
async function _hmac(
  url: string,
  way: "whatsapp" | "line",
  body: string,
  opts: { secret?: string | null; sent?: string } = {},
): Promise<Request> {
  const secret = opts.secret === undefined
    ? (way === "whatsapp" ? NEW_CREDENTIALS.whatsappSecret : NEW_CREDENTIALS.lineSecret)
    : opts.secret;
  const headers: Record<string, string> = { ..._json };
  if (secret !== null && way === "whatsapp") {
    headers["x-hub-signature-256"] = await signWhatsappPayload(secret, body);
  }
  if (secret !== null && way === "line") {
    headers["x-line-signature"] = await signLinePayload(secret, body);
  }
  return new Request(`${url}/webhooks/${way}`, {
    method: "POST",
    headers,
    body: opts.sent ?? body,
  });
}

/** A Twilio form, signed over the public URL (or `signedUrl`) with the auth token (or `token`). */
async function _twilio(
  url: string,
  params: URLSearchParams,
  opts: { token?: string | null; signedUrl?: string; sent?: string } = {},
): Promise<Request> {
  const token = opts.token === undefined ? NEW_CREDENTIALS.twilioToken : opts.token;
  const signed = opts.signedUrl ?? `${NEW_CREDENTIALS.publicUrl}/webhooks/twilio`;
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
  };
  if (token !== null) {
    headers["x-twilio-signature"] = await signTwilioRequest(token, signed, params);
  }
  return new Request(`${url}/webhooks/twilio`, {
    method: "POST",
    headers,
    body: opts.sent ?? params.toString(),
  });
}

/** A Teams or Google Chat delivery with a bearer JWT signed by `key` (null: no header). */
async function _jwt(
  url: string,
  way: "teams" | "google-chat",
  key: TestSigningKey | null,
  claims: TestClaims,
  payload: unknown,
): Promise<Request> {
  const headers: Record<string, string> = { ..._json };
  if (key) headers.authorization = `Bearer ${await signTestJwt(key, claims)}`;
  return new Request(`${url}/webhooks/${way}`, {
    method: "POST",
    headers,
    body: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

// The fuzzer's signed webhook routes as one table (path, valid payload, headers, signing), driven by one builder; Deno.
import fc from "fast-check";
import { signGithubPayload } from "../../lib/platforms/github.ts";
import { signLinePayload } from "../../lib/platforms/line.ts";
import { signSlackRequest } from "../../lib/platforms/slack.ts";
import { GOOGLE_CHAT_ISSUER } from "../../lib/platforms/google_chat.ts";
import { TEAMS_ISSUER } from "../../lib/platforms/teams.ts";
import { signTwilioRequest } from "../../lib/platforms/twilio.ts";
import {
  signTestJwt,
  testServiceAccount,
  testSigningKey,
} from "../../lib/platforms/_jwt_fixtures.ts";
import { signWhatsappPayload } from "../../lib/platforms/whatsapp.ts";
import { signStandardWebhook } from "../../lib/standard_webhooks.ts";
import { WEBHOOK_SECRET } from "./clients.ts";
import type { FakePlatform } from "./fake_platform.ts";
import { discordTestKeys, signDiscordRequest } from "./discord_signer.ts";
import {
  bodyArb,
  type BodySpec,
  contentType,
  extraHeaders,
  headerValue,
  MARK,
  NOW,
  renderBody,
  type RouteFuzz,
  sigArb,
  type SigSpec,
} from "./_fuzz_gen.ts";

const TG_SECRET = "tg-fuzz-secret_42";
const SLACK_SECRET = "slack-fuzz-signing-secret-0123456789";
const DISCORD_APP = "1100000000000000001";
const GH_SECRET = "github-fuzz-webhook-secret";
const GH_BOT = "batonbot";
const WA_SECRET = "wa-fuzz-app-secret";
const WA_PHONE = "106540352242922";
const LINE_SECRET = "line-fuzz-channel-secret";
const TWILIO_SID = "AC" + "f0".repeat(16);
const TWILIO_TOKEN = "twilio-fuzz-auth-token";
const FUZZ_PUBLIC_URL = "https://fuzz.baton.test";
const TEAMS_APP = "f1a2b3c4-0000-4000-8000-00000000f022";
const GCHAT_PROJECT = "314159265358";
const OTHER_WEBHOOK_SECRET = "whsec_" + btoa("some-other-secret-of-32-bytes!!!");

const encoder = new TextEncoder();
const discordKeys = await discordTestKeys();
const otherDiscordKeys = await discordTestKeys();
// The JWT platforms' signing keys: the fake platform publishes `jwtKey`, never `otherJwtKey`.
const jwtKey = await testSigningKey("fuzz-key-1", { endorsements: ["msteams"] });
const otherJwtKey = await testSigningKey("fuzz-key-1", { endorsements: ["msteams"] });
const gchatAccount = await testServiceAccount();
/** The fake platform's origin once the run has started (Teams activities name it as serviceUrl). */
let _platformUrl = "http://127.0.0.1:9";

/** Points the JWT routes at the running fake platform: its key set, and Teams' serviceUrl. */
export function useFuzzPlatform(platform: FakePlatform): void {
  platform.jwks.keys = [jwtKey.jwk];
  _platformUrl = platform.url;
}

/** Settings that configure every platform's webhook for the fuzz run (withPlatform adds the API roots). */
export const WEBHOOK_VARS: Record<string, string> = {
  TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
  TELEGRAM_BOT_TOKEN: "123456789:AAH-fuzz_bot_token",
  SLACK_SIGNING_SECRET: SLACK_SECRET,
  SLACK_BOT_TOKEN: "xoxb-fuzz",
  DISCORD_PUBLIC_KEY: discordKeys.publicKeyHex,
  DISCORD_APPLICATION_ID: DISCORD_APP,
  GITHUB_WEBHOOK_SECRET: GH_SECRET,
  GITHUB_TOKEN: "ghp_fuzz",
  GITHUB_BOT_LOGIN: GH_BOT,
  WHATSAPP_APP_SECRET: WA_SECRET,
  WHATSAPP_VERIFY_TOKEN: "wa-fuzz-verify-token",
  WHATSAPP_ACCESS_TOKEN: "EAAG-wa-fuzz-access-token",
  WHATSAPP_PHONE_NUMBER_ID: WA_PHONE,
  LINE_CHANNEL_SECRET: LINE_SECRET,
  LINE_CHANNEL_ACCESS_TOKEN: "line-fuzz-access-token",
  TWILIO_ACCOUNT_SID: TWILIO_SID,
  TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
  // Twilio signs the URL it calls: the fuzzer signs this one, whatever port workerd listens on.
  PUBLIC_URL: FUZZ_PUBLIC_URL,
  TEAMS_APP_ID: TEAMS_APP,
  TEAMS_APP_PASSWORD: "teams-fuzz-app-password",
  GOOGLE_CHAT_AUDIENCE: GCHAT_PROJECT,
  GOOGLE_CHAT_SERVICE_ACCOUNT: gchatAccount.json,
};

/** One generated webhook case: body, signature spec, content type, extra headers, route extras. */
export interface WebhookCase {
  body: BodySpec;
  sig: SigSpec;
  type: string;
  extra: [string, string][];
  [more: string]: unknown;
}

/** One signed webhook route of the table. */
export interface WebhookRoute {
  path: string;
  /** A valid payload; its text fields carry MARK. */
  payload: fc.Arbitrary<unknown>;
  /** Non-JSON bodies the route really meets (form posts), tried now and then. */
  raws?: string[];
  /** Per-case extras, generated after the common fields (so a seed keeps its cases). */
  more?: Record<string, fc.Arbitrary<unknown>>;
  /** Headers sent before the timestamp and the signature (ids, event names). */
  headers?(c: WebhookCase): [string, string][];
  /** The timestamp header when the scheme signs one; without it a stale or bad timestamp spec
   * becomes a signature over another body (the nearest wrong thing such a scheme has). */
  timestamp?: string;
  /** The signature header, its scheme prefix, a junk signature of that scheme, the separator of
   * several signatures in one header. */
  signature: { header: string; scheme: string; junk: string; sep: string };
  /** A valid signature over `over` at `ts`, with another key when `c.sig` asks for "wrongKey". */
  sign(over: Uint8Array, ts: string, c: WebhookCase): Promise<string> | string;
  /**
   * Form-encoded (Twilio): a JSON object body is sent as a form of its fields, JSON content types
   * become the form type, and a 2xx may answer with this content type instead of JSON.
   */
  form?: { answerType: string };
}

const wrongKey = (c: WebhookCase) => c.sig.k === "wrongKey";
/** A timestamp header value as the number a signer takes (now when it is not one). */
const tsNumber = (ts: string) => /^[0-9]{1,15}$/.test(ts) ? Number(ts) : nowLive();
const nowLive = () => Math.floor(Date.now() / 1000);

/** The signed webhook routes, in the order (and so with the seeds) the fuzzer has always used. */
export const WEBHOOKS: WebhookRoute[] = [
  {
    path: "/webhooks/generic",
    payload: fc.record({
      session: fc.stringMatching(/^fz[A-Za-z0-9._:-]{1,20}$/),
      user: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    }).map((r) => ({
      session: r.session,
      text: MARK,
      ...(r.user === undefined ? {} : { user: r.user }),
    })),
    // Mostly a fresh id; sometimes a random one (repeats replay the first outcome).
    more: {
      id: fc.option(headerValue, { freq: 8 }).map((id) => id ?? `msg_${crypto.randomUUID()}`),
    },
    headers: (c) => [["webhook-id", c.id as string]],
    timestamp: "webhook-timestamp",
    signature: {
      header: "webhook-signature",
      scheme: "v1,",
      junk: "v1,AAAAAAAAAAAAAAAAAAAAAA==",
      sep: " ",
    },
    sign: (over, ts, c) =>
      signStandardWebhook({
        secret: wrongKey(c) ? OTHER_WEBHOOK_SECRET : WEBHOOK_SECRET,
        id: c.id as string,
        timestamp: tsNumber(ts),
        body: over,
      }),
  },
  {
    path: "/webhooks/telegram",
    payload: fc.record({
      update: fc.nat(),
      message: fc.nat(),
      chat: fc.integer({ min: 1, max: 2 ** 40 }),
      caption: fc.boolean(),
    }).map((r) => ({
      update_id: r.update,
      message: {
        message_id: r.message,
        date: NOW,
        chat: { id: r.chat, type: "private", first_name: "Fuzz" },
        from: { id: r.chat, is_bot: false, first_name: "Fuzz", username: "fuzz" },
        [r.caption ? "caption" : "text"]: MARK,
      },
    })),
    signature: { header: "x-telegram-bot-api-secret-token", scheme: "", junk: "nope", sep: ", " },
    // A shared secret, not a signature: a wrong body or timestamp becomes a near-miss secret.
    sign: (_over, _ts, { sig }) => {
      if (sig.k === "otherBody") return TG_SECRET + sig.extra;
      if (sig.k === "stale" || sig.k === "badTs") return ` ${TG_SECRET.slice(1)}`;
      return sig.k === "wrongKey" ? "tg-other-secret" : TG_SECRET;
    },
  },
  {
    path: "/webhooks/slack",
    payload: fc.oneof(
      fc.record({ ts: fc.nat(), channel: fc.constantFrom("C0FUZZ", "D0FUZZ") }).map((r) => ({
        type: "event_callback",
        team_id: "T0FUZZ",
        authorizations: [{ user_id: "UBATON" }],
        event: {
          type: r.channel.startsWith("D") ? "message" : "app_mention",
          channel: r.channel,
          ts: `1700000000.${r.ts}`,
          user: "U0FUZZ",
          text: `<@UBATON> ${MARK}`,
          ...(r.channel.startsWith("D") ? { channel_type: "im" } : {}),
        },
      })),
      fc.constant({ type: "url_verification", challenge: MARK }),
    ),
    raws: ["ssl_check=1&token=x", "ssl_check=0", `text=${MARK}`],
    timestamp: "x-slack-request-timestamp",
    signature: {
      header: "x-slack-signature",
      scheme: "v0=",
      junk: "v0=" + "ab".repeat(32),
      sep: ",",
    },
    sign: (over, ts, c) =>
      signSlackRequest({
        secret: wrongKey(c) ? "another-slack-secret" : SLACK_SECRET,
        timestamp: tsNumber(ts),
        body: over,
      }),
  },
  {
    path: "/webhooks/discord",
    payload: fc.oneof(
      { weight: 5, arbitrary: fc.nat() },
      { weight: 1, arbitrary: fc.constant(-1) },
    ).map((n) =>
      n < 0 ? { id: "1", type: 1, application_id: DISCORD_APP } : {
        id: `12${String(n).padStart(17, "0")}`,
        type: 2,
        application_id: DISCORD_APP,
        token: `token-${n}`,
        channel_id: "1300000000000000001",
        channel: { id: "1300000000000000001", name: "general", type: 0 },
        guild_id: "1400000000000000001",
        member: {
          user: { id: "1500000000000000001", username: "ada", global_name: "Ada" },
          roles: [],
        },
        data: {
          id: "1600000000000000001",
          name: "ask",
          type: 1,
          options: [{ name: "prompt", type: 3, value: MARK }],
        },
      }
    ),
    timestamp: "x-signature-timestamp",
    signature: { header: "x-signature-ed25519", scheme: "", junk: "00".repeat(64), sep: "," },
    sign: (over, ts, c) =>
      signDiscordRequest({
        privateKey: wrongKey(c) ? otherDiscordKeys.privateKey : discordKeys.privateKey,
        timestamp: ts,
        body: over,
      }),
  },
  {
    path: "/webhooks/github",
    payload: fc.record({ id: fc.nat(), issue: fc.integer({ min: 1 }) }).map((r) => ({
      action: "created",
      issue: { number: r.issue, title: "Fuzz" },
      comment: {
        id: r.id,
        body: `@${GH_BOT} ${MARK}`,
        user: { login: "octocat", id: 1, type: "User" },
      },
      repository: { full_name: "octo-org/fuzz" },
      sender: { login: "octocat", id: 1 },
    })),
    raws: [`payload=${encodeURIComponent(`{"zen":"${MARK}"}`)}`, "payload="],
    more: {
      event: fc.oneof(
        { weight: 8, arbitrary: fc.constant("issue_comment") },
        { weight: 2, arbitrary: fc.constantFrom("ping", "push", "issues", "") },
        { weight: 1, arbitrary: headerValue },
      ),
    },
    headers: (c) => [
      ["x-github-event", c.event as string],
      ["x-github-delivery", crypto.randomUUID()],
    ],
    signature: {
      header: "x-hub-signature-256",
      scheme: "sha256=",
      junk: "sha256=" + "0".repeat(64),
      sep: ", ",
    },
    sign: (over, _ts, c) =>
      signGithubPayload(wrongKey(c) ? "another-github-secret" : GH_SECRET, over),
  },
];

/** The fuzz route of a table entry: generate a case, render its body, sign, shape the signature. */
export function webhookFuzz(route: WebhookRoute): RouteFuzz<WebhookCase> {
  return {
    name: `POST ${route.path}`,
    arb: fc.record({
      body: bodyArb(route.payload, route.raws),
      sig: sigArb,
      type: contentType,
      extra: extraHeaders,
      ...route.more,
    }) as fc.Arbitrary<WebhookCase>,
    build: async (c, marker) => {
      const body = route.form ? _formBody(c.body, marker) : renderBody(c.body, marker);
      const type = route.form && c.type.startsWith("application/json")
        ? "application/x-www-form-urlencoded"
        : c.type;
      const ts = _tsFor(c.sig);
      const good = await route.sign(_signedOver(c.sig, body, !!route.timestamp), ts, c);
      const { header, scheme, junk, sep } = route.signature;
      const sig = _shapeSignature(c.sig, good, scheme, junk, sep);
      return {
        method: "POST",
        path: route.path,
        headers: [
          ["content-type", type],
          ...(route.headers?.(c) ?? []),
          ...(route.timestamp ? [[route.timestamp, ts] as [string, string]] : []),
          ...(sig === null ? [] : [[header, sig] as [string, string]]),
          ...c.extra,
        ],
        body,
        ...(route.form ? { textAnswer: route.form.answerType } : {}),
      };
    },
  };
}

/** The timestamp header value a signature spec asks for. */
function _tsFor(sig: SigSpec): string {
  if (sig.k === "stale") return String(nowLive() + sig.offset);
  if (sig.k === "badTs") return sig.ts;
  return String(nowLive());
}

/** The bytes a signature is computed over: the body, or another one for a wrong-body spec. */
function _signedOver(sig: SigSpec, body: Uint8Array, timestamped: boolean): Uint8Array {
  if (sig.k === "otherBody") return _concat(body, encoder.encode(sig.extra));
  if (!timestamped && (sig.k === "stale" || sig.k === "badTs")) {
    return _concat(body, encoder.encode(" "));
  }
  return body;
}

function _concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Applies a signature spec to a valid signature `good` (and a junk one of the same scheme). */
function _shapeSignature(
  sig: SigSpec,
  good: string,
  scheme: string,
  junk: string,
  sep: string,
): string | null {
  switch (sig.k) {
    case "missing":
      return null;
    case "truncated":
      return good.slice(0, sig.cut % Math.max(1, good.length));
    case "prefix":
      return sig.prefix + good.slice(scheme.length);
    case "multi":
      return Array.from({ length: sig.count }, (_, i) => (i === sig.validAt ? good : junk)).join(
        sep,
      );
    case "random":
      return sig.value;
    case "upper":
      return good.toUpperCase();
    default:
      return good;
  }
}

/** A JSON object body as a form of its fields (values that are not strings as JSON); others as rendered. */
function _formBody(spec: BodySpec, marker: string): Uint8Array {
  if (spec.kind !== "json" || typeof spec.value !== "object" || spec.value === null) {
    return renderBody(spec, marker);
  }
  const withMark = (s: string) => s.replaceAll(MARK, marker);
  const fields = Object.entries(spec.value).map(([k, v]) => [
    withMark(k),
    withMark(typeof v === "string" ? v : JSON.stringify(v) ?? ""),
  ]);
  return encoder.encode(new URLSearchParams(fields).toString());
}

/** The form fields of a body as Twilio's signer takes them (undecodable bytes become U+FFFD). */
function _formParams(over: Uint8Array): URLSearchParams {
  return new URLSearchParams(new TextDecoder().decode(over));
}

/**
 * Routes added after the table above (WhatsApp, LINE, Twilio, then Teams and Google Chat, which
 * need `useFuzzPlatform`): run after every older route, so
 * that each older one keeps its seed.
 */
export const MORE_WEBHOOKS: WebhookRoute[] = [
  {
    path: "/webhooks/whatsapp",
    payload: fc.record({
      id: fc.nat(),
      from: fc.stringMatching(/^[1-9][0-9]{7,14}$/),
      statuses: fc.boolean(),
    }).map((r) => ({
      object: "whatsapp_business_account",
      entry: [{
        id: "102290129340398",
        changes: [{
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "15550783881", phone_number_id: WA_PHONE },
            contacts: [{ profile: { name: "Fuzz" }, wa_id: r.from }],
            ...(r.statuses
              ? { statuses: [{ id: `wamid.S${r.id}`, status: "delivered", recipient_id: r.from }] }
              : {
                messages: [{
                  from: r.from,
                  id: `wamid.FUZZ${r.id}`,
                  timestamp: String(NOW),
                  type: "text",
                  text: { body: MARK },
                }],
              }),
          },
        }],
      }],
    })),
    signature: {
      header: "x-hub-signature-256",
      scheme: "sha256=",
      junk: "sha256=" + "0".repeat(64),
      sep: ", ",
    },
    sign: (over, _ts, c) =>
      signWhatsappPayload(wrongKey(c) ? "another-wa-secret" : WA_SECRET, over),
  },
  {
    path: "/webhooks/line",
    payload: fc.record({
      id: fc.stringMatching(/^[0-9A-Z]{26}$/),
      user: fc.stringMatching(/^U[0-9a-f]{32}$/),
      group: fc.boolean(),
      redelivery: fc.boolean(),
    }).map((r) => ({
      destination: "Ufuzzbot",
      events: [{
        type: "message",
        mode: "active",
        timestamp: NOW * 1000,
        webhookEventId: r.id,
        deliveryContext: { isRedelivery: r.redelivery },
        source: r.group
          ? { type: "group", groupId: "Cfuzzgroup", userId: r.user }
          : { type: "user", userId: r.user },
        replyToken: "fuzz",
        message: {
          type: "text",
          id: "1",
          text: r.group ? `@bot ${MARK}` : MARK,
          ...(r.group
            ? { mention: { mentionees: [{ index: 0, length: 4, type: "user", isSelf: true }] } }
            : {}),
        },
      }],
    })),
    signature: { header: "x-line-signature", scheme: "", junk: "A".repeat(43) + "=", sep: "," },
    sign: (over, _ts, c) =>
      signLinePayload(wrongKey(c) ? "another-line-secret" : LINE_SECRET, over),
  },
  {
    path: "/webhooks/twilio",
    payload: fc.record({
      sid: fc.stringMatching(/^[0-9a-f]{32}$/),
      from: fc.stringMatching(/^\+1[0-9]{10}$/),
      whatsapp: fc.boolean(),
      status: fc.boolean(),
    }).map((r) => ({
      MessageSid: `SM${r.sid}`,
      AccountSid: TWILIO_SID,
      From: r.whatsapp ? `whatsapp:${r.from}` : r.from,
      To: r.whatsapp ? "whatsapp:+15005550006" : "+15005550006",
      ...(r.status ? { MessageStatus: "delivered" } : { Body: MARK, NumMedia: "0" }),
    })),
    raws: [`Body=${MARK}&From=%2B1&To=%2B1`, "MessageStatus=sent", "a=1&a=2&b"],
    signature: { header: "x-twilio-signature", scheme: "", junk: "A".repeat(27) + "=", sep: "," },
    sign: (over, _ts, c) =>
      signTwilioRequest(
        wrongKey(c) ? "another-twilio-token" : TWILIO_TOKEN,
        `${FUZZ_PUBLIC_URL}/webhooks/twilio`,
        _formParams(over),
      ),
    form: { answerType: "text/xml" },
  },
  {
    path: "/webhooks/teams",
    payload: fc.record({
      id: fc.stringMatching(/^[0-9]{13}$/),
      user: fc.stringMatching(/^[0-9a-f]{8}$/),
      channel: fc.boolean(),
      update: fc.boolean(),
    }).map((r) => ({
      type: r.update ? "conversationUpdate" : "message",
      id: r.id,
      serviceUrl: `${_platformUrl}/teams/`,
      channelId: "msteams",
      from: { id: `29:${r.user}`, name: "Fuzz", aadObjectId: `aad-${r.user}` },
      conversation: r.channel
        ? { id: "19:fuzz@thread.tacv2;messageid=1", conversationType: "channel", isGroup: true }
        : { id: `a:fuzz-${r.user}`, conversationType: "personal" },
      recipient: { id: `28:${TEAMS_APP}`, name: "baton" },
      text: r.channel ? `<at>baton</at> ${MARK}` : MARK,
      ...(r.channel
        ? {
          entities: [{
            type: "mention",
            text: "<at>baton</at>",
            mentioned: { id: `28:${TEAMS_APP}` },
          }],
        }
        : {}),
    })),
    signature: { header: "authorization", scheme: "Bearer ", junk: "Bearer a.b.c", sep: ", " },
    sign: (_over, _ts, c) =>
      _jwtFor(c, TEAMS_ISSUER, TEAMS_APP, { serviceurl: `${_platformUrl}/teams/` }),
  },
  {
    path: "/webhooks/google-chat",
    payload: fc.record({
      id: fc.stringMatching(/^[A-Za-z0-9]{11}\.[A-Za-z0-9]{11}$/),
      user: fc.stringMatching(/^[0-9]{6,21}$/),
      room: fc.boolean(),
      added: fc.boolean(),
    }).map((r) => {
      const space = r.room ? "spaces/AAAAfuzzroom" : `spaces/DM${r.user}`;
      return {
        type: r.added ? "ADDED_TO_SPACE" : "MESSAGE",
        space: r.room ? { name: space, type: "ROOM" } : { name: space, type: "DM" },
        message: {
          name: `${space}/messages/${r.id}`,
          text: r.room ? `@baton ${MARK}` : MARK,
          argumentText: r.room ? ` ${MARK}` : MARK,
          thread: { name: `${space}/threads/${r.id.slice(0, 11)}` },
        },
        user: { name: `users/${r.user}`, displayName: "Fuzz", type: "HUMAN" },
      };
    }),
    signature: { header: "authorization", scheme: "Bearer ", junk: "Bearer a.b.c", sep: ", " },
    sign: (_over, _ts, c) => _jwtFor(c, GOOGLE_CHAT_ISSUER, GCHAT_PROJECT, {}),
  },
];

/**
 * A bearer JWT for a JWT-verified route: a token covers no body or timestamp, so the fuzzer's
 * wrong-body and stale specs become the nearest wrong things it has — another audience, an
 * expired token; a wrong key is a key the platform does not publish.
 */
async function _jwtFor(
  c: WebhookCase,
  issuer: string,
  audience: string,
  claims: Record<string, unknown>,
): Promise<string> {
  const { k } = c.sig;
  const key = k === "wrongKey" ? otherJwtKey : jwtKey;
  const token = await signTestJwt(key, {
    issuer,
    audience: k === "otherBody" ? `${audience}0` : audience,
    ...(k === "stale" || k === "badTs" ? { lifetime: -600 } : {}),
    claims,
  });
  return `Bearer ${token}`;
}

// The fuzzer's signed webhook routes as one table over the platforms' drivers (their shapes, their signers), driven by one builder; Deno.
import type { webhook } from "@line/bot-sdk";
import fc from "fast-check";
import type { FakePlatform } from "./fake_platform.ts";
import { DISCORD_APP_ID, discordDriver } from "./drivers/discord.ts";
import { genericDriver } from "./drivers/generic.ts";
import { githubDriver } from "./drivers/github.ts";
import { googleChatDriver } from "./drivers/google_chat.ts";
import { lineDriver, lineRedelivery } from "./drivers/line.ts";
import { type Driver, DRIVERS, type Post } from "./drivers/mod.ts";
import { slackDriver } from "./drivers/slack.ts";
import { teamsDriver } from "./drivers/teams.ts";
import { telegramDriver } from "./drivers/telegram.ts";
import { twilioDriver } from "./drivers/twilio.ts";
import { whatsappDriver } from "./drivers/whatsapp.ts";
import {
  bodyArb,
  type BodySpec,
  contentType,
  extraHeaders,
  headerValue,
  MARK,
  renderBody,
  type RouteFuzz,
  sigArb,
  type SigSpec,
} from "./_fuzz_gen.ts";

const encoder = new TextEncoder();

/**
 * The settings that configure every platform's webhook for the fuzz run, from the drivers (which
 * it points at `platform`: Teams' serviceUrl, the JWT platforms' published keys).
 */
export function webhookVars(platform: FakePlatform): Record<string, string> {
  return Object.assign({}, ...DRIVERS.map((d) => d.vars(platform)));
}

/** One generated webhook case: body, signature spec, content type, extra headers, route extras. */
export interface WebhookCase {
  body: BodySpec;
  sig: SigSpec;
  type: string;
  extra: [string, string][];
  [more: string]: unknown;
}

/** One signed webhook route of the table: a platform's driver and how the fuzzer varies it. */
export interface WebhookRoute<C = unknown> {
  /** The platform's driver: its route, shapes and signer. */
  driver: Driver<C>;
  /** A valid payload, from the driver's shape; its text fields carry MARK. */
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
  /**
   * The credentials a case signs with where the scheme has nearer wrong ones than a stranger's
   * (a token's audience, a shared secret's near misses); by default the driver's own, or its
   * stranger's for a "wrongKey" spec.
   */
  credentials?(c: WebhookCase): C;
}

/** A route of the table, typed by its driver's credentials. */
function _route<C>(route: WebhookRoute<C>): WebhookRoute {
  return route as unknown as WebhookRoute;
}

/** The driver's shape of `post` as plain JSON (what the mutations work on: no Dates). */
function _shaped(driver: Driver<unknown>, post: Post): Record<string, unknown> {
  return JSON.parse(JSON.stringify(driver.shape(post)));
}

/** The signed webhook routes, in the order (and so with the seeds) the fuzzer has always used. */
export const WEBHOOKS: WebhookRoute[] = [
  _route({
    driver: genericDriver,
    payload: fc.record({
      session: fc.stringMatching(/^fz[A-Za-z0-9._:-]{1,20}$/),
      user: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    }).map((r) =>
      _shaped(genericDriver, {
        chat: r.session,
        text: MARK,
        id: "",
        ...(r.user === undefined ? {} : { from: { id: r.user, name: r.user } }),
      })
    ),
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
  }),
  _route({
    driver: telegramDriver,
    payload: fc.record({
      update: fc.nat(),
      message: fc.nat(),
      chat: fc.integer({ min: 1, max: 2 ** 40 }),
      caption: fc.boolean(),
    }).map((r) => {
      const update = _shaped(telegramDriver, {
        chat: String(r.chat),
        text: MARK,
        id: String(r.message),
        event: String(r.update),
      });
      if (!r.caption) return update;
      // A photo's caption carries the text instead.
      const { text: _, ...message } = update.message as Record<string, unknown>;
      return { ...update, message: { ...message, caption: MARK } };
    }),
    signature: { header: "x-telegram-bot-api-secret-token", scheme: "", junk: "nope", sep: ", " },
    // A shared secret, not a signature: a wrong body or timestamp becomes a near-miss secret.
    credentials: ({ sig }) => {
      const { secret } = telegramDriver.credentials;
      if (sig.k === "otherBody") return { secret: secret + sig.extra };
      if (sig.k === "stale" || sig.k === "badTs") return { secret: ` ${secret.slice(1)}` };
      return sig.k === "wrongKey" ? telegramDriver.stranger : telegramDriver.credentials;
    },
  }),
  _route({
    driver: slackDriver,
    payload: fc.oneof(
      fc.record({ ts: fc.nat(), channel: fc.constantFrom("C0FUZZ", "D0FUZZ") }).map((r) =>
        _shaped(slackDriver, {
          chat: r.channel,
          text: MARK,
          id: `1700000000.${r.ts}`,
          group: r.channel.startsWith("C"),
          mention: true,
        })
      ),
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
  }),
  _route({
    driver: discordDriver,
    payload: fc.oneof(
      { weight: 5, arbitrary: fc.nat() },
      { weight: 1, arbitrary: fc.constant(-1) },
    ).map((n) =>
      // Discord's PING, or a slash command.
      n < 0 ? { id: "1", type: 1, application_id: DISCORD_APP_ID } : _shaped(discordDriver, {
        chat: "1300000000000000001",
        text: MARK,
        id: `12${String(n).padStart(17, "0")}`,
      })
    ),
    timestamp: "x-signature-timestamp",
    signature: { header: "x-signature-ed25519", scheme: "", junk: "00".repeat(64), sep: "," },
  }),
  _route({
    driver: githubDriver,
    payload: fc.record({ id: fc.nat(), issue: fc.integer({ min: 1 }) }).map((r) =>
      _shaped(githubDriver, { chat: String(r.issue), text: MARK, id: String(r.id), mention: true })
    ),
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
  }),
];

/** The fuzz route of a table entry: generate a case, render its body, sign, shape the signature. */
export function webhookFuzz(route: WebhookRoute): RouteFuzz<WebhookCase> {
  return {
    name: `POST ${route.driver.path}`,
    arb: fc.record({
      body: bodyArb(route.payload, route.raws, { large: route.driver.name === "generic" }),
      sig: sigArb,
      type: contentType,
      extra: extraHeaders,
      ...route.more,
    }) as fc.Arbitrary<WebhookCase>,
    build: async (c, marker) => {
      const { driver } = route;
      const body = driver.form ? _formBody(c.body, marker) : renderBody(c.body, marker);
      const type = driver.form && c.type.startsWith("application/json")
        ? "application/x-www-form-urlencoded"
        : c.type;
      const ts = _tsFor(c.sig);
      const { header, scheme, junk, sep } = route.signature;
      const good = (await driver.sign(
        _signedOver(c.sig, body, !!route.timestamp),
        route.credentials?.(c) ?? (c.sig.k === "wrongKey" ? driver.stranger : driver.credentials),
        { at: route.timestamp ? ts : _untimedAt(c.sig), id: c.id as string | undefined },
      ))[header];
      const sig = _shapeSignature(c.sig, good, scheme, junk, sep);
      return {
        method: "POST",
        path: driver.path,
        headers: [
          ["content-type", type],
          ...(route.headers?.(c) ?? []),
          ...(route.timestamp ? [[route.timestamp, ts] as [string, string]] : []),
          ...(sig === null ? [] : [[header, sig] as [string, string]]),
          ...c.extra,
        ],
        body,
        ...(driver.form && typeof driver.ack === "object" && "contentType" in driver.ack
          ? { textAnswer: driver.ack.contentType }
          : {}),
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

/**
 * The signing time of a scheme without a timestamp header: a stale or bad timestamp spec becomes
 * two hours ago, which only a token carries (an expired one); now otherwise.
 */
function _untimedAt(sig: SigSpec): number | undefined {
  return sig.k === "stale" || sig.k === "badTs" ? nowLive() - 7_200 : undefined;
}

const nowLive = () => Math.floor(Date.now() / 1000);

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

/**
 * Routes added after the table above (WhatsApp, LINE, Twilio, Teams, Google Chat): run after every
 * older route, so that each older one keeps its seed.
 */
export const MORE_WEBHOOKS: WebhookRoute[] = [
  _route({
    driver: whatsappDriver,
    payload: fc.record({
      id: fc.nat(),
      from: fc.stringMatching(/^[1-9][0-9]{7,14}$/),
      statuses: fc.boolean(),
    }).map((r) => {
      const note = _shaped(whatsappDriver, { chat: r.from, text: MARK, id: `wamid.FUZZ${r.id}` });
      if (!r.statuses) return note;
      // A delivery receipt in place of the message: the same notification, `statuses` inside.
      const value = (note.entry as { changes: { value: Record<string, unknown> }[] }[])[0]
        .changes[0].value;
      delete value.messages;
      value.statuses = [{ id: `wamid.S${r.id}`, status: "delivered", recipient_id: r.from }];
      return note;
    }),
    signature: {
      header: "x-hub-signature-256",
      scheme: "sha256=",
      junk: "sha256=" + "0".repeat(64),
      sep: ", ",
    },
  }),
  _route({
    driver: lineDriver,
    payload: fc.record({
      id: fc.stringMatching(/^[0-9A-Z]{26}$/),
      user: fc.stringMatching(/^U[0-9a-f]{32}$/),
      group: fc.boolean(),
      redelivery: fc.boolean(),
    }).map((r) => {
      const callback = lineDriver.shape({
        chat: r.group ? "Cfuzzgroup" : r.user,
        from: { id: r.user, name: r.user },
        text: MARK,
        id: "1",
        event: r.id,
        group: r.group,
        mention: r.group,
      });
      return JSON.parse(
        JSON.stringify(
          r.redelivery ? lineRedelivery(callback as webhook.CallbackRequest) : callback,
        ),
      );
    }),
    signature: { header: "x-line-signature", scheme: "", junk: "A".repeat(43) + "=", sep: "," },
  }),
  _route({
    driver: twilioDriver,
    payload: fc.record({
      sid: fc.stringMatching(/^[0-9a-f]{32}$/),
      from: fc.stringMatching(/^\+1[0-9]{10}$/),
      whatsapp: fc.boolean(),
      status: fc.boolean(),
    }).map((r) => {
      const form = _shaped(twilioDriver, { chat: r.from, text: MARK, id: `SM${r.sid}` });
      // Twilio's WhatsApp sender prefixes both numbers; a status callback carries no Body.
      if (r.whatsapp) {
        Object.assign(form, { From: `whatsapp:${form.From}`, To: `whatsapp:${form.To}` });
      }
      if (r.status) {
        delete form.Body;
        delete form.NumMedia;
        form.MessageStatus = "delivered";
      }
      return form;
    }),
    raws: [`Body=${MARK}&From=%2B1&To=%2B1`, "MessageStatus=sent", "a=1&a=2&b"],
    signature: { header: "x-twilio-signature", scheme: "", junk: "A".repeat(27) + "=", sep: "," },
  }),
  _route({
    driver: teamsDriver,
    payload: fc.record({
      id: fc.stringMatching(/^[0-9]{13}$/),
      user: fc.stringMatching(/^[0-9a-f]{8}$/),
      channel: fc.boolean(),
      update: fc.boolean(),
    }).map((r) => {
      const activity = _shaped(teamsDriver, {
        chat: r.channel ? "19:fuzz@thread.tacv2;messageid=1" : `a:fuzz-${r.user}`,
        from: { id: `29:${r.user}`, name: "Fuzz" },
        text: MARK,
        id: r.id,
        group: r.channel,
        mention: r.channel,
      });
      return r.update ? { ...activity, type: "conversationUpdate" } : activity;
    }),
    signature: { header: "authorization", scheme: "Bearer ", junk: "Bearer a.b.c", sep: ", " },
    credentials: (c) => _jwtCredentials(teamsDriver, c),
  }),
  _route({
    driver: googleChatDriver,
    payload: fc.record({
      id: fc.stringMatching(/^[A-Za-z0-9]{11}\.[A-Za-z0-9]{11}$/),
      user: fc.stringMatching(/^[0-9]{6,21}$/),
      room: fc.boolean(),
      added: fc.boolean(),
    }).map((r) => {
      const space = r.room ? "spaces/AAAAfuzzroom" : `spaces/DM${r.user}`;
      const event = _shaped(googleChatDriver, {
        chat: space,
        from: { id: `users/${r.user}`, name: "Fuzz" },
        text: MARK,
        id: `${space}/messages/${r.id}`,
        thread: `${space}/threads/${r.id.slice(0, 11)}`,
        group: r.room,
        mention: r.room,
      });
      return r.added ? { ...event, type: "ADDED_TO_SPACE" } : event;
    }),
    signature: { header: "authorization", scheme: "Bearer ", junk: "Bearer a.b.c", sep: ", " },
    credentials: (c) => _jwtCredentials(googleChatDriver, c),
  }),
];

/**
 * A JWT platform's credentials for a case: a token covers no body, so the fuzzer's wrong-body spec
 * becomes the nearest wrong thing it has, another audience (a stale one is an expired token: see
 * `_untimedAt`); a wrong key is one the platform does not publish.
 */
function _jwtCredentials<C extends { audience: string }>(driver: Driver<C>, c: WebhookCase): C {
  if (c.sig.k === "wrongKey") return driver.stranger;
  if (c.sig.k === "otherBody") {
    return { ...driver.credentials, audience: `${driver.credentials.audience}0` };
  }
  return driver.credentials;
}

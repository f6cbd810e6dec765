// The fuzzer's media routes: chat completions with image, audio and file parts, the generic webhook with `attachments` — random bytes, real and broken data URLs, links that cannot be fetched; Deno.
import fc from "fast-check";
import { encodeBase64 } from "../../lib/runtime/mod.ts";
import { apiAuthArb } from "./_fuzz_api.ts";
import { API_KEY } from "./clients.ts";
import {
  asksForStream,
  authHeader,
  bodyArb,
  type BodySpec,
  contentType,
  extraHeaders,
  MARK,
  renderBody,
  route,
  type RouteFuzz,
  sigArb,
  type SigSpec,
} from "./_fuzz_gen.ts";
import { webhookFuzz, type WebhookRoute, WEBHOOKS } from "./_fuzz_webhooks.ts";
import { genericDriver } from "./drivers/generic.ts";

/** A 1×1 PNG: the one payload every check admits (the turn then runs with it). */
const _PNG = atob(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
);
/** A 1×1 GIF. */
const _GIF = atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==");

const _bytesOf = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/**
 * The bytes of a part: random (up to 6 KiB), a real image, a real image's head with junk after it
 * (sniffed as an image, broken inside), a PDF's magic with junk, nothing.
 */
const _bytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 6 * 1024 }) },
  { weight: 3, arbitrary: fc.constantFrom(_bytesOf(_PNG), _bytesOf(_GIF)) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(_PNG, _GIF), fc.uint8Array({ maxLength: 2048 }))
      .map(([head, junk]) => new Uint8Array([..._bytesOf(head.slice(0, 24)), ...junk])),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 2048 })
      .map((junk) => new Uint8Array([..._bytesOf("%PDF-1.7\n"), ...junk])),
  },
  { weight: 1, arbitrary: fc.constant(new Uint8Array()) },
);

/** A declared media type: a fitting one, a wrong one, junk. */
const _type = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "image/png",
      "image/jpeg",
      "image/gif",
      "image/webp",
      "audio/wav",
      "audio/mpeg",
      "application/pdf",
      "text/plain",
      "application/octet-stream",
    ),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{0,8}\/?[a-z0-9.+-]{0,12}$/) },
);

/**
 * A media URL: a data URL of the bytes under a declared type, the bare base64, broken base64 or a
 * broken data URL, an https link to a closed loopback port (fetched inside the turn: it fails
 * there, never the request), a link baton refuses (http, file, javascript), nothing.
 */
const _url: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(_type, _bytes).map(([t, b]) => `data:${t};base64,${encodeBase64(b)}`),
  },
  { weight: 2, arbitrary: _bytes.map((b) => encodeBase64(b)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "data:image/png;base64,!!!not base64!!!",
      "data:image/png;base64,",
      "data:image/png,rawbytes",
      "data:;base64,AAAA",
      "data:",
      "https://127.0.0.1:9/missing.png",
      "http://127.0.0.1:9/plain.png",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "",
    ),
  },
);

/** One media part of a chat message: `image_url`, `input_audio` or `file`, its fields drawn. */
const _part: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ url: _url, detail: fc.constantFrom(undefined, "low", "high", "x") })
      .map((r) => ({
        type: "image_url",
        image_url: { url: r.url, ...(r.detail ? { detail: r.detail } : {}) },
      })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      bytes: _bytes,
      format: fc.constantFrom("wav", "mp3", "ogg", "WAV", "", "x/y", "a".repeat(40)),
    }).map((r) => ({
      type: "input_audio",
      input_audio: { data: encodeBase64(r.bytes), format: r.format },
    })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      url: _url,
      filename: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
    }).map((r) => ({
      type: "file",
      file: { file_data: r.url, ...(r.filename === undefined ? {} : { filename: r.filename }) },
    })),
  },
);

/** A valid chat completion whose last user message (sometimes an earlier one too) carries 1–4 media parts. */
const _chatMediaBase: fc.Arbitrary<unknown> = fc.record({
  parts: fc.array(_part, { minLength: 1, maxLength: 4 }),
  earlier: fc.option(_part, { freq: 4 }),
  stream: fc.boolean(),
}).map((r) => ({
  model: "any",
  messages: [
    ...(r.earlier === null ? [] : [
      { role: "user", content: [{ type: "text", text: `${MARK} earlier` }, r.earlier] },
      { role: "assistant", content: "ok" },
    ]),
    { role: "user", content: [{ type: "text", text: MARK }, ...r.parts] },
  ],
  stream: r.stream,
}));

/**
 * `good` three times in four, else `any`: the media parts are what varies here, so most cases
 * carry a valid body and credentials to reach the media checks and, when admitted, a turn.
 */
function _mostly<T>(good: fc.Arbitrary<T>, any: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: any });
}

/** `base` as a body spec, unmutated. */
function _valid(base: fc.Arbitrary<unknown>): fc.Arbitrary<BodySpec> {
  return base.map((value): BodySpec => ({ kind: "json", value }));
}

/** POST /v1/chat/completions with media parts (a route of its own: the text route keeps its seed). */
const _chatMedia = route(
  "POST /v1/chat/completions (media parts)",
  fc.record({
    auth: _mostly(fc.constant<string | null>(`Bearer ${API_KEY}`), apiAuthArb),
    body: _mostly(_valid(_chatMediaBase), bodyArb(_chatMediaBase)),
    type: _mostly(fc.constant("application/json"), contentType),
    extra: extraHeaders,
  }),
  (c, marker) => {
    const body = renderBody(c.body, marker);
    return {
      method: "POST",
      path: "/v1/chat/completions",
      headers: [...authHeader(c.auth), ["content-type", c.type], ...c.extra],
      body,
      sseAllowed: asksForStream(body),
    };
  },
);

/** One generic-webhook attachment: base64 `data` or an https `url`, with a name and a type or not. */
const _attachment: fc.Arbitrary<unknown> = fc.record({
  bytes: _bytes,
  link: fc.boolean(),
  url: fc.constantFrom(
    "https://127.0.0.1:9/a.pdf",
    "http://127.0.0.1:9/a.pdf",
    "https://",
    "not a url",
  ),
  name: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
  type: fc.option(_type, { nil: undefined }),
  junkData: fc.option(fc.constantFrom("!!!", "====", "data:image/png;base64,AAAA"), { freq: 6 }),
}).map((r) => ({
  ...(r.link ? { url: r.url } : { data: r.junkData ?? encodeBase64(r.bytes) }),
  ...(r.name === undefined ? {} : { name: r.name }),
  ...(r.type === undefined ? {} : { type: r.type }),
}));

/** The generic webhook with `attachments` (0–12: the cap is 10), text empty or marked. */
const _genericAttachments: WebhookRoute = {
  ...WEBHOOKS[0],
  payload: fc.record({
    session: fc.stringMatching(/^fzatt[A-Za-z0-9._:-]{1,16}$/),
    attachments: fc.array(_attachment, { maxLength: 12 }),
    // Without text only the attachments are the message: it must be refused or run, no 5xx.
    text: fc.constantFrom(MARK, MARK, MARK, ""),
  }).map((r) => {
    const shaped = JSON.parse(JSON.stringify(genericDriver.shape({
      chat: r.session,
      text: r.text,
      id: "",
    })));
    return { ...shaped, attachments: r.attachments };
  }),
};

/**
 * The media routes, appended after every other route (the others keep their seeds): a refused
 * part is a 4xx naming it and starts no turn (the fake model never sees its marker), an admitted
 * one runs, and nothing is a 5xx.
 */
export const MEDIA_ROUTES: RouteFuzz<never>[] = [
  _chatMedia as unknown as RouteFuzz<never>,
  {
    ...webhookFuzz(_genericAttachments),
    name: "POST /webhooks/generic (attachments)",
    // The case of webhookFuzz, with a valid body, signature and type most of the time.
    arb: fc.record({
      body: _mostly(
        _valid(_genericAttachments.payload),
        bodyArb(_genericAttachments.payload, [], { large: true }),
      ),
      sig: _mostly(fc.constant<SigSpec>({ k: "valid" }), sigArb),
      type: _mostly(fc.constant("application/json"), contentType),
      extra: extraHeaders,
      ..._genericAttachments.more,
    }),
  } as unknown as RouteFuzz<never>,
];

// Fuzzed ingress: every route answers 2xx/4xx JSON and rejected requests start no turn; Deno + Miniflare + fast-check.
import fc from "fast-check";
import { assert } from "@std/assert";
import { signGithubPayload } from "../lib/platforms/github.ts";
import { signSlackRequest } from "../lib/platforms/slack.ts";
import { signStandardWebhook } from "../lib/standard_webhooks.ts";
import { API_KEY, WEBHOOK_SECRET, withBaton } from "./_support/clients.ts";
import { discordTestKeys, signDiscordRequest } from "./_support/discord_signer.ts";
import type { FakeLlm } from "./_support/fake_llm.ts";
import { type FakePlatform, startFakePlatform } from "./_support/fake_platform.ts";
import type { TestWorker } from "./_support/worker.ts";

/** Cases per route (FUZZ_RUNS overrides), the fixed seed (FUZZ_SEED overrides), requests in flight at once. */
const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 2000);
const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 20260426);
const BATCH = Math.max(1, Number(Deno.env.get("FUZZ_BATCH") ?? 8));
const MAX_BODY = 1024 * 1024;

const TG_SECRET = "tg-fuzz-secret_42";
const TG_TOKEN = "123456789:AAH-fuzz_bot_token";
const SLACK_SECRET = "slack-fuzz-signing-secret-0123456789";
const DISCORD_APP = "1100000000000000001";
const GH_SECRET = "github-fuzz-webhook-secret";
const GH_BOT = "batonbot";
const OTHER_WEBHOOK_SECRET = "whsec_" + btoa("some-other-secret-of-32-bytes!!!");

const encoder = new TextEncoder();
const NOW = Math.floor(Date.now() / 1000);

const discordKeys = await discordTestKeys();
const otherDiscordKeys = await discordTestKeys();
const DISCORD_PUBLIC_KEY = discordKeys.publicKeyHex;

// ---------------------------------------------------------------------------------------------
// Markers: every text field carries "FUZZ-<n>." so a turn can be traced back to its request.

const MARK = "@@MARK@@";
let _nextMarker = 0;
/** Final status of each marker's request. */
const markerStatus = new Map<number, number>();
/** run ids returned by POST /v1/runs, reused by GET /v1/runs/{id}. */
const runIds: string[] = [];

/** A string of n "x" after the marker, materialised only when the body is serialised. */
class Huge {
  constructor(readonly n: number) {}
  toJSON(): string {
    return MARK + "x".repeat(this.n);
  }
}
/** Removes the field it replaces. */
class Drop {
  toJSON(): undefined {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Generators.

const latin1 = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof(
      { weight: 140, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 50, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
      { weight: 8, arbitrary: fc.constant(0x09) },
      // Headers cannot carry these: such a case is skipped as unsendable.
      { weight: 2, arbitrary: fc.constantFrom(0x00, 0x0a, 0x0d, 0x1f, 0x7f) },
    ).map((c) => String.fromCharCode(c)),
    maxLength,
  });
/** Latin-1 mostly, sometimes wider Unicode (which Headers refuses: the case is skipped). */
const headerValue = fc.oneof(
  { weight: 12, arbitrary: latin1() },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
);
const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const extraHeaders = fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 });
const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/json; charset=utf-8",
      "",
      "multipart/form-data; boundary=x",
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.object({ maxDepth: 1, maxKeys: 3 }),
  fc.integer({ min: 4097, max: 120_000 }).map((n) => new Huge(n)),
  latin1(20),
  fc.constant(new Drop()),
);

type Path = (string | number)[];

function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (v && typeof v === "object" && !(v instanceof Huge) && !(v instanceof Drop)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)]));
  }
  return v;
}

function paths(v: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...prefix, i])));
  else if (v && typeof v === "object" && !(v instanceof Huge) && !(v instanceof Drop)) {
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  }
  return out;
}

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value instanceof Drop) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
  return root;
}

/** A valid payload with one or two fields replaced by a value of the wrong type (or removed). */
function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(
    base,
    fc.array(fc.tuple(fc.nat(), wrongValue), { minLength: 1, maxLength: 2 }),
  ).map(([value, muts]) => {
    let v = clone(value);
    for (const [pick, wrong] of muts) {
      const all = paths(v);
      v = setAt(v, all[pick % all.length], wrong);
    }
    return v;
  });
}

type BodySpec =
  | { kind: "json"; value: unknown }
  | { kind: "truncated"; value: unknown; cut: number }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "raw"; text: string }
  | { kind: "empty" }
  | { kind: "oversized"; n: number; json: boolean };

/** Bodies around a valid payload: valid, mistyped, truncated, random bytes/JSON, empty, >1 MiB (1 in 200). */
function bodyArb(base: fc.Arbitrary<unknown>, raws: string[] = []): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { weight: 6, arbitrary: base.map((value): BodySpec => ({ kind: "json", value })) },
    { weight: 115, arbitrary: mutated(base).map((value): BodySpec => ({ kind: "json", value })) },
    {
      weight: 30,
      arbitrary: fc.tuple(base, fc.nat()).map(([value, cut]): BodySpec => ({
        kind: "truncated",
        value,
        cut,
      })),
    },
    {
      weight: 24,
      arbitrary: fc.uint8Array({ maxLength: 512 }).map((bytes): BodySpec => ({
        kind: "bytes",
        bytes,
      })),
    },
    {
      weight: 16,
      arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): BodySpec => ({ kind: "json", value })),
    },
    { weight: 4, arbitrary: fc.constant<BodySpec>({ kind: "empty" }) },
    {
      weight: raws.length ? 4 : 0,
      arbitrary: fc.constantFrom(...(raws.length ? raws : [""])).map((text): BodySpec => ({
        kind: "raw",
        text,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: MAX_BODY + 1, max: MAX_BODY + 65_536 }), fc.boolean())
        .map(([n, json]): BodySpec => ({ kind: "oversized", n, json })),
    },
  );
}

function renderBody(spec: BodySpec, marker: string): Uint8Array {
  const withMark = (s: string) => s.replaceAll(MARK, marker);
  switch (spec.kind) {
    case "json":
      return encoder.encode(withMark(JSON.stringify(spec.value) ?? ""));
    case "truncated": {
      const s = withMark(JSON.stringify(spec.value) ?? "");
      return encoder.encode(s.slice(0, s.length ? spec.cut % s.length : 0));
    }
    case "bytes":
      return spec.bytes;
    case "raw":
      return encoder.encode(withMark(spec.text));
    case "empty":
      return new Uint8Array();
    case "oversized": {
      if (!spec.json) return new Uint8Array(spec.n).fill(0x7b);
      const head = `{"session":"fz","text":"${marker}`;
      return encoder.encode(head + "x".repeat(spec.n - head.length - 2) + '"}');
    }
  }
}

const authArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant<string | null>(`Bearer ${API_KEY}`) },
  {
    weight: 6,
    arbitrary: fc.constantFrom<string | null>(
      null,
      `bearer ${API_KEY}`,
      `Bearer   ${API_KEY}   `,
      `Bearer ${API_KEY}x`,
      `Bearer ${API_KEY.slice(0, -1)}`,
      `Basic ${btoa(`user:${API_KEY}`)}`,
      `Token ${API_KEY}`,
      API_KEY,
      "Bearer ",
      "",
    ),
  },
  { weight: 2, arbitrary: headerValue.map((v) => `Bearer ${v}`) },
  { weight: 1, arbitrary: headerValue },
);

type SigSpec =
  | { k: "valid" }
  | { k: "missing" }
  | { k: "truncated"; cut: number }
  | { k: "prefix"; prefix: string }
  | { k: "otherBody"; extra: string }
  | { k: "stale"; offset: number }
  | { k: "badTs"; ts: string }
  | { k: "multi"; count: number; validAt: number }
  | { k: "random"; value: string }
  | { k: "upper" }
  | { k: "wrongKey" };

const sigArb: fc.Arbitrary<SigSpec> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<SigSpec>({ k: "valid" }) },
  { weight: 2, arbitrary: fc.constant<SigSpec>({ k: "missing" }) },
  { weight: 2, arbitrary: fc.nat().map((cut): SigSpec => ({ k: "truncated", cut })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "v0,",
      "v0=",
      "v1=",
      "v1,",
      "v2,",
      "sha1=",
      "SHA256=",
      "V1,",
      " ",
    )
      .map((prefix): SigSpec => ({ k: "prefix", prefix })),
  },
  {
    weight: 2,
    arbitrary: fc.string({ minLength: 1, maxLength: 4 }).map((extra): SigSpec => ({
      k: "otherBody",
      extra,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 301, max: 1_000_000_000 }), fc.boolean()).map((
      [n, past],
    ): SigSpec => ({ k: "stale", offset: past ? -n : n })),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom("", "abc", "-1", "1e9", ` ${NOW}`, `${NOW}.5`, "0x10", "9".repeat(25)),
      latin1(12),
    ).map((ts): SigSpec => ({ k: "badTs", ts })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 2, max: 4 }), fc.integer({ min: -1, max: 3 })).map((
      [count, validAt],
    ): SigSpec => ({ k: "multi", count, validAt })),
  },
  { weight: 2, arbitrary: headerValue.map((value): SigSpec => ({ k: "random", value })) },
  { weight: 1, arbitrary: fc.constant<SigSpec>({ k: "upper" }) },
  { weight: 1, arbitrary: fc.constant<SigSpec>({ k: "wrongKey" }) },
);

const sessionIdArb = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^fz[A-Za-z0-9._:-]{1,20}$/) },
  { weight: 1, arbitrary: latin1(20) },
  { weight: 1, arbitrary: fc.constant("s".repeat(129)) },
);

// ---------------------------------------------------------------------------------------------
// Valid payloads per route (text fields carry MARK).

const chatBase: fc.Arbitrary<unknown> = fc.record({
  stream: fc.boolean(),
  system: fc.boolean(),
  parts: fc.boolean(),
  history: fc.boolean(),
  user: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
}).map((r) => ({
  model: "any",
  messages: [
    ...(r.system ? [{ role: "system", content: "be brief" }] : []),
    ...(r.history
      ? [{ role: "user", content: `${MARK} earlier` }, { role: "assistant", content: "ok" }]
      : []),
    { role: "user", content: r.parts ? [{ type: "text", text: MARK }] : MARK },
  ],
  stream: r.stream,
  ...(r.user === undefined ? {} : { user: r.user }),
}));

const runBase: fc.Arbitrary<unknown> = fc.record({
  session: fc.option(fc.stringMatching(/^fzrun[A-Za-z0-9._:-]{1,12}$/), { nil: undefined }),
}).map((r) => ({ input: MARK, ...(r.session === undefined ? {} : { session: r.session }) }));

const genericBase: fc.Arbitrary<unknown> = fc.record({
  session: fc.stringMatching(/^fz[A-Za-z0-9._:-]{1,20}$/),
  user: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
}).map((r) => ({
  session: r.session,
  text: MARK,
  ...(r.user === undefined ? {} : { user: r.user }),
}));

const telegramBase: fc.Arbitrary<unknown> = fc.record({
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
}));

const slackBase: fc.Arbitrary<unknown> = fc.oneof(
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
);

const discordBase: fc.Arbitrary<unknown> = fc.oneof(
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
    member: { user: { id: "1500000000000000001", username: "ada", global_name: "Ada" }, roles: [] },
    data: {
      id: "1600000000000000001",
      name: "ask",
      type: 1,
      options: [{ name: "prompt", type: 3, value: MARK }],
    },
  }
);

const githubBase: fc.Arbitrary<unknown> = fc.record({ id: fc.nat(), issue: fc.integer({ min: 1 }) })
  .map((r) => ({
    action: "created",
    issue: { number: r.issue, title: "Fuzz" },
    comment: {
      id: r.id,
      body: `@${GH_BOT} ${MARK}`,
      user: { login: "octocat", id: 1, type: "User" },
    },
    repository: { full_name: "octo-org/fuzz" },
    sender: { login: "octocat", id: 1 },
  }));

// ---------------------------------------------------------------------------------------------
// Building and sending one case.

interface Built {
  method: string;
  path: string;
  headers: [string, string][];
  body?: Uint8Array;
  /** A text/event-stream answer is allowed (a valid streaming request). */
  sseAllowed?: boolean;
}

interface RouteFuzz<C> {
  name: string;
  arb: fc.Arbitrary<C>;
  build(c: C, marker: string): Promise<Built | null>;
  /** Called with each answered case (e.g. to collect run ids). */
  seen?(res: Response, text: string): void;
}

interface Stats {
  sent: number;
  skipped: number;
  resetAfter413: number;
  statuses: Map<number, number>;
}

function describe(b: Built): string {
  const body = b.body
    ? `${b.body.length} bytes: ${JSON.stringify(new TextDecoder().decode(b.body.slice(0, 400)))}${
      b.body.length > 400 ? "…" : ""
    }`
    : "none";
  return `${b.method} ${b.path}\n  headers: ${
    JSON.stringify(b.headers.map(([k, v]) => [k, v.length > 200 ? v.slice(0, 200) + "…" : v]))
  }\n  body: ${body}`;
}

/** Sends one case and checks the invariants; returns false when the request cannot be sent. */
async function sendCase<C>(
  worker: TestWorker,
  route: RouteFuzz<C>,
  c: C,
  stats: Stats,
): Promise<boolean> {
  const n = _nextMarker++;
  const marker = `FUZZ-${n}.`;
  let built: Built | null;
  try {
    built = await route.build(c, marker);
  } catch (e) {
    if (e instanceof URIError) return false; // a lone surrogate cannot be put in a URL
    throw e;
  }
  if (!built) return false;
  let request: Request;
  // Deno's fetch cannot put control characters into a header (hyper refuses them): cannot send.
  // deno-lint-ignore no-control-regex
  const unsendable = /[\x00-\x08\x0a-\x1f\x7f]/;
  const abort = new AbortController();
  try {
    request = new Request(new URL(worker.url).origin + built.path, {
      method: built.method,
      headers: new Headers(built.headers),
      body: built.body as BodyInit | undefined,
      redirect: "manual",
      signal: abort.signal,
    });
    for (const [, v] of request.headers) if (unsendable.test(v)) throw new TypeError(v);
  } catch (e) {
    // Headers refuse values outside Latin-1 (and CR/LF/NUL); fetch refuses some methods: cannot send.
    if (e instanceof TypeError) {
      stats.skipped++;
      return false;
    }
    throw e;
  }
  const timer = setTimeout(() => abort.abort(), 60_000);
  let res: Response;
  let text: string;
  try {
    res = await fetch(request);
  } catch (e) {
    clearTimeout(timer);
    throw new Error(`${route.name}: request failed (${e})\n${describe(built)}`);
  }
  try {
    text = await res.text();
  } catch (e) {
    // A 413 is answered before the oversized body is read; workerd then closes the connection
    // with that body unread, and the reset can cut the answer's body short (the status arrived).
    if (res.status === 413 && (built.body?.length ?? 0) > MAX_BODY) {
      stats.sent++;
      stats.resetAfter413++;
      stats.statuses.set(413, (stats.statuses.get(413) ?? 0) + 1);
      markerStatus.set(n, 413);
      return true;
    }
    throw new Error(`${route.name}: reading the answer failed (${e})\n${describe(built)}`);
  } finally {
    clearTimeout(timer);
  }
  stats.sent++;
  stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
  markerStatus.set(n, res.status);
  const fail = (why: string) =>
    new Error(
      `${route.name}: ${why}\n${describe(built!)}\n  answer: ${res.status} ${
        res.headers.get("content-type")
      } ${JSON.stringify(text.slice(0, 300))}`,
    );
  const okStatus = (res.status >= 200 && res.status < 300) ||
    (res.status >= 400 && res.status < 500);
  if (!okStatus) throw fail(`status ${res.status} is neither 2xx nor 4xx`);
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    if (!built.sseAllowed || res.status !== 200) throw fail("unexpected text/event-stream");
  } else if (!(built.method.toUpperCase() === "HEAD" || res.status === 204)) {
    if (!type.startsWith("application/json")) throw fail("content-type is not application/json");
    try {
      JSON.parse(text);
    } catch {
      throw fail("body is not JSON");
    }
  }
  route.seen?.(res, text);
  return true;
}

async function fuzzRoute<C>(worker: TestWorker, route: RouteFuzz<C>, seed: number): Promise<void> {
  const stats: Stats = { sent: 0, skipped: 0, resetAfter413: 0, statuses: new Map() };
  const started = performance.now();
  console.log(`${route.name}: seed=${seed} runs=${RUNS} batch=${BATCH}`);
  if (BATCH === 1) {
    await fc.assert(
      fc.asyncProperty(route.arb, async (c) => {
        fc.pre(await sendCase(worker, route, c, stats));
      }),
      { numRuns: RUNS, seed },
    );
  } else {
    // Cases go out BATCH at a time; an unsendable case is replaced by a spare one of the run.
    await fc.assert(
      fc.asyncProperty(
        fc.array(route.arb, { minLength: BATCH * 4, maxLength: BATCH * 4 }),
        async (cases) => {
          let sent = 0;
          let inFlight = 0;
          const queue = [...cases];
          const lane = async () => {
            while (sent + inFlight < BATCH && queue.length) {
              inFlight++;
              const ok = await sendCase(worker, route, queue.shift()!, stats);
              inFlight--;
              if (ok) sent++;
            }
          };
          await Promise.all(Array.from({ length: BATCH }, lane));
        },
      ),
      { numRuns: Math.ceil(RUNS / BATCH), seed },
    );
  }
  const statuses = [...stats.statuses].sort(([a], [b]) => a - b).map(([s, k]) => `${s}×${k}`);
  console.log(
    `${route.name}: ${stats.sent} sent, ${stats.skipped} unsendable, ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s; ${statuses.join(" ")}${
      stats.resetAfter413 ? ` (${stats.resetAfter413} 413s cut short by the connection reset)` : ""
    }`,
  );
  assert(stats.sent >= RUNS, `${route.name}: only ${stats.sent} of ${RUNS} cases sent`);
}

// ---------------------------------------------------------------------------------------------
// Signers.

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The timestamp header value a signature spec asks for. */
function tsFor(sig: SigSpec): string {
  if (sig.k === "stale") return String(NOW_LIVE() + sig.offset);
  if (sig.k === "badTs") return sig.ts;
  return String(NOW_LIVE());
}
const NOW_LIVE = () => Math.floor(Date.now() / 1000);

/** Applies a signature spec to a valid signature `good` (and a junk one of the same scheme). */
function shapeSignature(
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

/** Body bytes a wrong-body/wrong-key signature is computed over. */
function signedBody(sig: SigSpec, body: Uint8Array): Uint8Array {
  return sig.k === "otherBody" ? concat(body, encoder.encode(sig.extra)) : body;
}

// ---------------------------------------------------------------------------------------------
// Routes.

const sseIfStreaming = (body: Uint8Array): boolean => {
  try {
    return JSON.parse(new TextDecoder().decode(body))?.stream === true;
  } catch {
    return false;
  }
};

const chatRoute: RouteFuzz<{
  auth: string | null;
  body: BodySpec;
  session: string | null;
  type: string;
  extra: [string, string][];
}> = {
  name: "POST /v1/chat/completions",
  arb: fc.record({
    auth: authArb,
    body: bodyArb(chatBase),
    session: fc.option(sessionIdArb, { freq: 3 }),
    type: contentType,
    extra: extraHeaders,
  }),
  build: (c, marker) => {
    const body = renderBody(c.body, marker);
    return Promise.resolve({
      method: "POST",
      path: "/v1/chat/completions",
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ["content-type", c.type],
        ...(c.session === null ? [] : [["x-session-id", c.session] as [string, string]]),
        ...c.extra,
      ],
      body,
      sseAllowed: sseIfStreaming(body),
    });
  },
};

const modelsRoute: RouteFuzz<{
  auth: string | null;
  method: string;
  suffix: string;
  extra: [string, string][];
}> = {
  name: "GET /v1/models",
  arb: fc.record({
    auth: authArb,
    method: fc.constantFrom("GET", "GET", "GET", "HEAD"),
    suffix: fc.oneof(
      { weight: 5, arbitrary: fc.constant("") },
      { weight: 1, arbitrary: fc.constantFrom("/", "?x=1", "?", "%20", "/extra") },
      { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
    ),
    extra: extraHeaders,
  }),
  build: (c) =>
    Promise.resolve({
      method: c.method,
      path: `/v1/models${c.suffix}`,
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ...c.extra,
      ],
    }),
};

const keyArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/) },
  { weight: 4, arbitrary: latin1(60) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 900 }).map((n) => "k".repeat(n)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      ".",
      "..",
      "%",
      "%zz",
      "%00",
      "a/b",
      "a%2Fb",
      "?x",
      "#",
      "api:x",
      "webhook:x",
      "%E0%A4%A",
      "%C0%AF",
      "%ff%fe",
    ),
  },
);
const keyEncoding = fc.constantFrom<"component" | "raw" | "uri">("component", "raw", "uri");

function keyPath(key: string, how: "component" | "raw" | "uri"): string {
  if (how === "component") return encodeURIComponent(key);
  if (how === "uri") return encodeURI(key);
  return key;
}

const sessionGetRoute: RouteFuzz<{
  auth: string | null;
  key: string;
  how: "component" | "raw" | "uri";
  extra: [string, string][];
}> = {
  name: "GET /v1/sessions/{key}",
  arb: fc.record({ auth: authArb, key: keyArb, how: keyEncoding, extra: extraHeaders }),
  build: (c) =>
    Promise.resolve({
      method: "GET",
      path: `/v1/sessions/${keyPath(c.key, c.how)}`,
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ...c.extra,
      ],
    }),
};

const sessionStopRoute: RouteFuzz<{
  auth: string | null;
  key: string;
  how: "component" | "raw" | "uri";
  body: BodySpec | null;
  extra: [string, string][];
}> = {
  name: "POST /v1/sessions/{key}/stop",
  arb: fc.record({
    auth: authArb,
    key: keyArb,
    how: keyEncoding,
    body: fc.option(bodyArb(runBase), { freq: 2 }),
    extra: extraHeaders,
  }),
  build: (c, marker) =>
    Promise.resolve({
      method: "POST",
      path: `/v1/sessions/${keyPath(c.key, c.how)}/stop`,
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ...c.extra,
      ],
      ...(c.body ? { body: renderBody(c.body, marker) } : {}),
    }),
};

const runsPostRoute: RouteFuzz<{
  auth: string | null;
  body: BodySpec;
  type: string;
  extra: [string, string][];
}> = {
  name: "POST /v1/runs",
  arb: fc.record({ auth: authArb, body: bodyArb(runBase), type: contentType, extra: extraHeaders }),
  build: (c, marker) =>
    Promise.resolve({
      method: "POST",
      path: "/v1/runs",
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ["content-type", c.type],
        ...c.extra,
      ],
      body: renderBody(c.body, marker),
    }),
  seen: (res, text) => {
    if (res.status === 202) runIds.push(JSON.parse(text).run_id);
  },
};

const b64url = (s: string) => btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

const runIdArb = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((i) => ({ real: i })) },
  {
    weight: 6,
    arbitrary: fc.tuple(
      fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,30}$/), latin1(20)),
      fc.oneof(
        fc.integer({ min: 1, max: 1000 }).map(String),
        fc.constantFrom("0", "01", "-1", "1.5", "9".repeat(17), "99999999999999999999", ""),
      ),
    ).map(([session, seq]) => ({ id: `run_${b64url(session)}_${seq}` })),
  },
  { weight: 3, arbitrary: latin1(60).map((id) => ({ id })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "run_",
      "run__1",
      "run_%%%_1",
      "run_" + "A".repeat(200) + "_1",
      "run_AAAA_1",
      "run_=_1",
    ).map((id) => ({ id })),
  },
);

const runGetRoute: RouteFuzz<{
  auth: string | null;
  run: { real: number } | { id: string };
  how: "component" | "raw" | "uri";
  extra: [string, string][];
}> = {
  name: "GET /v1/runs/{id}",
  arb: fc.record({ auth: authArb, run: runIdArb, how: keyEncoding, extra: extraHeaders }),
  build: (c) => {
    const id = "real" in c.run
      ? (runIds.length ? runIds[c.run.real % runIds.length] : "run_ZnpfMQ_1")
      : c.run.id;
    return Promise.resolve({
      method: "GET",
      path: `/v1/runs/${keyPath(id, c.how)}`,
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ...c.extra,
      ],
    });
  },
};

type WebhookCase = { body: BodySpec; sig: SigSpec; type: string; extra: [string, string][] };

function webhookArb(base: fc.Arbitrary<unknown>, raws: string[] = []): fc.Arbitrary<WebhookCase> {
  return fc.record({
    body: bodyArb(base, raws),
    sig: sigArb,
    type: contentType,
    extra: extraHeaders,
  });
}

const genericRoute: RouteFuzz<WebhookCase & { id: string | null }> = {
  name: "POST /webhooks/generic",
  arb: fc.record({
    body: bodyArb(genericBase),
    sig: sigArb,
    type: contentType,
    extra: extraHeaders,
    id: fc.option(headerValue, { freq: 8 }),
  }),
  build: async (c, marker) => {
    const body = renderBody(c.body, marker);
    const id = c.id ?? `msg_${crypto.randomUUID()}`;
    const ts = tsFor(c.sig);
    const tsNum = /^[0-9]{1,15}$/.test(ts) ? Number(ts) : NOW_LIVE();
    const good = await signStandardWebhook({
      secret: c.sig.k === "wrongKey" ? OTHER_WEBHOOK_SECRET : WEBHOOK_SECRET,
      id,
      timestamp: tsNum,
      body: signedBody(c.sig, body),
    });
    const sig = shapeSignature(c.sig, good, "v1,", "v1,AAAAAAAAAAAAAAAAAAAAAA==", " ");
    return {
      method: "POST",
      path: "/webhooks/generic",
      headers: [
        ["content-type", c.type],
        ["webhook-id", id],
        ["webhook-timestamp", ts],
        ...(sig === null ? [] : [["webhook-signature", sig] as [string, string]]),
        ...c.extra,
      ],
      body,
    };
  },
};

const telegramRoute: RouteFuzz<WebhookCase> = {
  name: "POST /webhooks/telegram",
  arb: webhookArb(telegramBase),
  build: (c, marker) => {
    const body = renderBody(c.body, marker);
    let secret: string | null = TG_SECRET;
    if (c.sig.k === "otherBody") secret = TG_SECRET + c.sig.extra;
    else if (c.sig.k === "stale" || c.sig.k === "badTs") secret = ` ${TG_SECRET.slice(1)}`;
    else if (c.sig.k === "wrongKey") secret = "tg-other-secret";
    else secret = shapeSignature(c.sig, TG_SECRET, "", "nope", ", ");
    return Promise.resolve({
      method: "POST",
      path: "/webhooks/telegram",
      headers: [
        ["content-type", c.type],
        ...(secret === null
          ? []
          : [["x-telegram-bot-api-secret-token", secret] as [string, string]]),
        ...c.extra,
      ],
      body,
    });
  },
};

const slackRoute: RouteFuzz<WebhookCase> = {
  name: "POST /webhooks/slack",
  arb: webhookArb(slackBase, ["ssl_check=1&token=x", "ssl_check=0", `text=${MARK}`]),
  build: async (c, marker) => {
    const body = renderBody(c.body, marker);
    const ts = tsFor(c.sig);
    const good = await signSlackRequest({
      secret: c.sig.k === "wrongKey" ? "another-slack-secret" : SLACK_SECRET,
      timestamp: /^[0-9]{1,15}$/.test(ts) ? Number(ts) : NOW_LIVE(),
      body: signedBody(c.sig, body),
    });
    const sig = shapeSignature(c.sig, good, "v0=", "v0=" + "ab".repeat(32), ",");
    return {
      method: "POST",
      path: "/webhooks/slack",
      headers: [
        ["content-type", c.type],
        ["x-slack-request-timestamp", ts],
        ...(sig === null ? [] : [["x-slack-signature", sig] as [string, string]]),
        ...c.extra,
      ],
      body,
    };
  },
};

const discordRoute: RouteFuzz<WebhookCase> = {
  name: "POST /webhooks/discord",
  arb: webhookArb(discordBase),
  build: async (c, marker) => {
    const body = renderBody(c.body, marker);
    const ts = tsFor(c.sig);
    const key = c.sig.k === "wrongKey" ? otherDiscordKeys.privateKey : discordKeys.privateKey;
    const good = await signDiscordRequest({
      privateKey: key,
      timestamp: ts,
      body: signedBody(c.sig, body),
    });
    const sig = shapeSignature(c.sig, good, "", "00".repeat(64), ",");
    return {
      method: "POST",
      path: "/webhooks/discord",
      headers: [
        ["content-type", c.type],
        ["x-signature-timestamp", ts],
        ...(sig === null ? [] : [["x-signature-ed25519", sig] as [string, string]]),
        ...c.extra,
      ],
      body,
    };
  },
};

const githubRoute: RouteFuzz<WebhookCase & { event: string }> = {
  name: "POST /webhooks/github",
  arb: fc.record({
    body: bodyArb(githubBase, [`payload=${encodeURIComponent(`{"zen":"${MARK}"}`)}`, "payload="]),
    sig: sigArb,
    type: contentType,
    extra: extraHeaders,
    event: fc.oneof(
      { weight: 8, arbitrary: fc.constant("issue_comment") },
      { weight: 2, arbitrary: fc.constantFrom("ping", "push", "issues", "") },
      { weight: 1, arbitrary: headerValue },
    ),
  }),
  build: async (c, marker) => {
    const body = renderBody(c.body, marker);
    // No timestamp in GitHub's scheme: stale/bad-timestamp specs become a signature over another body.
    const over = c.sig.k === "stale" || c.sig.k === "badTs"
      ? concat(body, encoder.encode(" "))
      : signedBody(c.sig, body);
    const good = await signGithubPayload(
      c.sig.k === "wrongKey" ? "another-github-secret" : GH_SECRET,
      over,
    );
    const sig = shapeSignature(c.sig, good, "sha256=", "sha256=" + "0".repeat(64), ", ");
    return {
      method: "POST",
      path: "/webhooks/github",
      headers: [
        ["content-type", c.type],
        ["x-github-event", c.event],
        ["x-github-delivery", crypto.randomUUID()],
        ...(sig === null ? [] : [["x-hub-signature-256", sig] as [string, string]]),
        ...c.extra,
      ],
      body,
    };
  },
};

const universalBase: fc.Arbitrary<unknown> = fc.constant({
  model: "any",
  messages: [{ role: "user", content: MARK }],
  input: MARK,
  text: MARK,
  session: "fzrandom",
});

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~%:-]{0,12}$/),
  fc.constantFrom(
    "..",
    ".",
    "%2e",
    "%2F",
    "completions",
    "generic",
    "telegram",
    "slack",
    "stop",
    "reset",
    "events",
    "run_ZnoxMjM_1",
    "models",
    "sessions",
    "runs",
  ),
  latin1(8),
);

const KJ_METHODS = [
  "PURGE",
  "COPY",
  "LOCK",
  "MKCOL",
  "MOVE",
  "PROPFIND",
  "PROPPATCH",
  "SEARCH",
  "UNLOCK",
  "ACL",
  "REPORT",
  "MKACTIVITY",
  "CHECKOUT",
  "MERGE",
  "MSEARCH",
  "NOTIFY",
  "SUBSCRIBE",
  "UNSUBSCRIBE",
];

const randomRoute: RouteFuzz<{
  method: string;
  path: string;
  query: string | null;
  auth: string | null;
  body: BodySpec | null;
  extra: [string, string][];
}> = {
  name: "random method and path",
  arb: fc.record({
    method: fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
      },
      // workerd's HTTP server knows only these methods (others get its own 501 text/plain, before
      // any Worker code runs; so does "M-SEARCH", which it spells MSEARCH); fetch normalises the lowercase ones and refuses TRACE/CONNECT.
      {
        weight: 2,
        arbitrary: fc.constantFrom(...KJ_METHODS),
      },
      { weight: 1, arbitrary: fc.constantFrom("get", "post", "put", "TRACE", "CONNECT") },
    ),
    path: fc.oneof(
      { weight: 2, arbitrary: fc.webPath() },
      {
        weight: 5,
        arbitrary: fc.tuple(
          fc.constantFrom(
            "",
            "/v1",
            "/v1/runs",
            "/v1/sessions",
            "/v1/chat",
            "/v1/chat/completions",
            "/v1/models",
            "/webhooks",
            "/webhooks/generic",
            "/healthz",
          ),
          fc.array(segment, { maxLength: 3 }),
          fc.boolean(),
        ).map(([prefix, segs, slash]) =>
          [prefix, ...segs].join("/").replace(/^(?!\/)/, "/") + (slash ? "/" : "")
        ),
      },
    ),
    query: fc.option(fc.webQueryParameters()),
    auth: authArb,
    body: fc.option(bodyArb(universalBase)),
    extra: extraHeaders,
  }),
  build: (c, marker) => {
    const bodyless = ["GET", "HEAD"].includes(c.method.toUpperCase());
    const path = (c.path.startsWith("/") ? c.path : `/${c.path}`) +
      (c.query === null ? "" : `?${c.query}`);
    return Promise.resolve({
      method: c.method,
      path,
      headers: [
        ...(c.auth === null ? [] : [["authorization", c.auth] as [string, string]]),
        ...c.extra,
      ],
      ...(c.body && !bodyless ? { body: renderBody(c.body, marker) } : {}),
      sseAllowed: /^\/v1\/runs\/[^/]+\/events\/?$/.test(path) ||
        (/^\/v1\/chat\/completions\/?$/.test(path) && c.body !== null && !bodyless &&
          sseIfStreaming(renderBody(c.body, marker))),
    });
  },
};

// ---------------------------------------------------------------------------------------------

/** Waits until no model call is in flight and none has started for a while. */
async function quiet(fake: FakeLlm, platform: FakePlatform): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const now = fake.requests.length + platform.calls.length;
    if (now !== last || fake.inFlight > 0) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince > 750) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("every route: fuzzed requests answer 2xx/4xx JSON and rejected ones start no turn", async (t) => {
  console.log(`fuzz: seed=${SEED} runs=${RUNS} batch=${BATCH} (FUZZ_SEED, FUZZ_RUNS, FUZZ_BATCH)`);
  const platform = await startFakePlatform();
  try {
    await withBaton(async (worker, fake) => {
      const routes: RouteFuzz<never>[] = [
        chatRoute,
        modelsRoute,
        sessionGetRoute,
        sessionStopRoute,
        runsPostRoute,
        runGetRoute,
        genericRoute,
        telegramRoute,
        slackRoute,
        discordRoute,
        githubRoute,
        randomRoute,
      ] as unknown as RouteFuzz<never>[];
      for (const [i, route] of routes.entries()) {
        await t.step(`${route.name}: answers 2xx/4xx with JSON for fuzzed input`, async () => {
          await fuzzRoute(worker, route, SEED + i);
        });
      }
      await t.step("fake model: no request text came from a rejected request", async () => {
        await quiet(fake, platform);
        const leaked: string[] = [];
        let accepted = 0;
        for (const req of fake.requests) {
          for (const m of JSON.stringify(req.body).matchAll(/FUZZ-([0-9]+)\./g)) {
            const status = markerStatus.get(Number(m[1]));
            if (status === undefined || status >= 400) leaked.push(`${m[0]} (status ${status})`);
            else accepted++;
          }
        }
        console.log(
          `fake model: ${fake.requests.length} requests, ${accepted} accepted markers, ${leaked.length} from rejected requests`,
        );
        assert(
          leaked.length === 0,
          `turns started by rejected requests: ${leaked.slice(0, 20).join(", ")}`,
        );
      });
    }, {
      vars: {
        TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
        TELEGRAM_BOT_TOKEN: TG_TOKEN,
        TELEGRAM_API_ROOT: platform.url,
        SLACK_SIGNING_SECRET: SLACK_SECRET,
        SLACK_BOT_TOKEN: "xoxb-fuzz",
        SLACK_API_ROOT: `${platform.url}/api`,
        DISCORD_PUBLIC_KEY,
        DISCORD_APPLICATION_ID: DISCORD_APP,
        DISCORD_API_ROOT: platform.url,
        GITHUB_WEBHOOK_SECRET: GH_SECRET,
        GITHUB_TOKEN: "ghp_fuzz",
        GITHUB_BOT_LOGIN: GH_BOT,
        GITHUB_API_ROOT: platform.url,
      },
    });
  } finally {
    await platform.close();
  }
});

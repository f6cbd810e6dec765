// The fuzzer's API routes (chat, models, sessions, runs, responses) and the random method-and-path route; Deno.
import fc from "fast-check";
import { API_KEY } from "./clients.ts";
import {
  asksForStream,
  authHeader,
  bodyArb,
  contentType,
  extraHeaders,
  headerValue,
  latin1,
  MARK,
  renderBody,
  route,
  type RouteFuzz,
  sessionSeqIdArb,
} from "./_fuzz_gen.ts";
import { RESPONSE_ROUTES } from "./_fuzz_responses.ts";

/** Authorization header specs: the right bearer key mostly, near misses, junk, none (null). */
export const apiAuthArb = fc.oneof(
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

/** X-Session-Id values: valid mostly, sometimes junk or one character too long. */
const _sessionIdArb = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^fz[A-Za-z0-9._:-]{1,20}$/) },
  { weight: 1, arbitrary: latin1(20) },
  { weight: 1, arbitrary: fc.constant("s".repeat(129)) },
);

/** A valid chat completion request; text fields carry MARK. */
const _chatBase: fc.Arbitrary<unknown> = fc.record({
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

/** A valid POST /v1/runs body. */
const _runBase: fc.Arbitrary<unknown> = fc.record({
  session: fc.option(fc.stringMatching(/^fzrun[A-Za-z0-9._:-]{1,12}$/), { nil: undefined }),
}).map((r) => ({ input: MARK, ...(r.session === undefined ? {} : { session: r.session }) }));

/** A valid POST /v1/jobs body (its occurrence lies beyond the fuzz run). */
const _jobBase: fc.Arbitrary<unknown> = fc.record({
  session: fc.stringMatching(/^fzjob[A-Za-z0-9._-]{1,12}$/),
  schedule: fc.constantFrom<unknown>(
    { in: 3600 },
    { every: 3600 },
    { cron: "0 9 * * *", tz: "Europe/Berlin" },
    { at: "2099-01-01T00:00:00Z" },
  ),
}).map((r) => ({ prompt: MARK, ...r }));

/** A valid JSON-RPC message (or batch) for POST /mcp; `ask` messages carry MARK. */
const _mcpBase: fc.Arbitrary<unknown> = fc.record({
  kind: fc.constantFrom(
    "ask",
    "ask",
    "history",
    "list",
    "initialize",
    "ping",
    "notification",
    "unknown",
    "batch",
  ),
  session: fc.option(fc.stringMatching(/^fzmcp[A-Za-z0-9._:-]{1,12}$/), { nil: undefined }),
  progress: fc.boolean(),
  id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })),
}).map((r) => {
  const meta = r.progress ? { _meta: { progressToken: r.id } } : {};
  const call = (name: string, args: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id: r.id,
    method: "tools/call",
    params: { name, arguments: args, ...meta },
  });
  const ask = call("ask", { message: MARK, ...(r.session ? { session: r.session } : {}) });
  switch (r.kind) {
    case "ask":
      return ask;
    case "history":
      return call("session_history", { session: r.session ?? "fzmcp" });
    case "list":
      return { jsonrpc: "2.0", id: r.id, method: "tools/list", params: {} };
    case "initialize":
      return {
        jsonrpc: "2.0",
        id: r.id,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "fuzz", version: "1" },
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id: r.id, method: "ping" };
    case "notification":
      return { jsonrpc: "2.0", method: "notifications/initialized" };
    case "unknown":
      return { jsonrpc: "2.0", id: r.id, method: "resources/list" };
    default:
      return [{ jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...ask, id: 2 }];
  }
});

/** Whether a POST /mcp body asks for progress (its answer may then be an event stream). */
function _mcpAsksProgress(body: Uint8Array): boolean {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body));
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.some((m) => m?.params?._meta?.progressToken !== undefined);
  } catch {
    return false;
  }
}

/** A body that would be valid on most routes, for the random route. */
const _universalBase: fc.Arbitrary<unknown> = fc.constant({
  model: "any",
  messages: [{ role: "user", content: MARK }],
  input: MARK,
  text: MARK,
  session: "fzrandom",
});

/** Session keys in URLs: valid, Latin-1, binary, over-long, and path/percent-encoding traps. */
const _keyArb = fc.oneof(
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
/** How a path segment is written: URI-component-encoded, as is, or URI-encoded. */
export const pathEncoding = fc.constantFrom<"component" | "raw" | "uri">("component", "raw", "uri");

/** `segment` written the way `how` says. */
export function encodePath(key: string, how: "component" | "raw" | "uri"): string {
  if (how === "component") return encodeURIComponent(key);
  if (how === "uri") return encodeURI(key);
  return key;
}

/** Run ids: real ones (an index into those seen), well-formed unknown ones, junk. */
const _runIdArb = sessionSeqIdArb("run");
const _jobIdArb = sessionSeqIdArb("job");

/** Path segments near baton's routes. */
const _segment = fc.oneof(
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

/** Methods workerd's HTTP server (kj) knows beyond the usual ones. */
const _KJ_METHODS = [
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

/** run ids returned by POST /v1/runs, reused by GET /v1/runs/{id}. */
const _runIds: string[] = [];

/** The API routes, in the order (and so with the seeds) the fuzzer has always used. */
export const API_ROUTES: RouteFuzz<never>[] = [
  route(
    "POST /v1/chat/completions",
    fc.record({
      auth: apiAuthArb,
      body: bodyArb(_chatBase, [], { large: true }),
      session: fc.option(_sessionIdArb, { freq: 3 }),
      type: contentType,
      extra: extraHeaders,
    }),
    (c, marker) => {
      const body = renderBody(c.body, marker);
      return {
        method: "POST",
        path: "/v1/chat/completions",
        headers: [
          ...authHeader(c.auth),
          ["content-type", c.type],
          ...(c.session === null ? [] : [["x-session-id", c.session] as [string, string]]),
          ...c.extra,
        ],
        body,
        sseAllowed: asksForStream(body),
      };
    },
  ),
  route(
    "GET /v1/models",
    fc.record({
      auth: apiAuthArb,
      method: fc.constantFrom("GET", "GET", "GET", "HEAD"),
      suffix: fc.oneof(
        { weight: 5, arbitrary: fc.constant("") },
        { weight: 1, arbitrary: fc.constantFrom("/", "?x=1", "?", "%20", "/extra") },
        { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
      ),
      extra: extraHeaders,
    }),
    (c) => ({
      method: c.method,
      path: `/v1/models${c.suffix}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
  route(
    "GET /v1/sessions/{key}",
    fc.record({ auth: apiAuthArb, key: _keyArb, how: pathEncoding, extra: extraHeaders }),
    (c) => ({
      method: "GET",
      path: `/v1/sessions/${encodePath(c.key, c.how)}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
  route(
    "POST /v1/sessions/{key}/stop",
    fc.record({
      auth: apiAuthArb,
      key: _keyArb,
      how: pathEncoding,
      body: fc.option(bodyArb(_runBase, [], { large: true }), { freq: 2 }),
      extra: extraHeaders,
    }),
    (c, marker) => ({
      method: "POST",
      path: `/v1/sessions/${encodePath(c.key, c.how)}/stop`,
      headers: [...authHeader(c.auth), ...c.extra],
      ...(c.body ? { body: renderBody(c.body, marker) } : {}),
    }),
  ),
  route(
    "POST /v1/runs",
    fc.record({
      auth: apiAuthArb,
      body: bodyArb(_runBase),
      type: contentType,
      extra: extraHeaders,
    }),
    (c, marker) => ({
      method: "POST",
      path: "/v1/runs",
      headers: [...authHeader(c.auth), ["content-type", c.type], ...c.extra],
      body: renderBody(c.body, marker),
    }),
    (res, text) => {
      if (res.status === 202) _runIds.push(JSON.parse(text).run_id);
    },
  ),
  route(
    "GET /v1/runs/{id}",
    fc.record({ auth: apiAuthArb, run: _runIdArb, how: pathEncoding, extra: extraHeaders }),
    (c) => {
      const id = "real" in c.run
        ? (_runIds.length ? _runIds[c.run.real % _runIds.length] : "run_ZnpfMQ_1")
        : c.run.id;
      return {
        method: "GET",
        path: `/v1/runs/${encodePath(id, c.how)}`,
        headers: [...authHeader(c.auth), ...c.extra],
      };
    },
  ),
  // Last, so that the routes above keep their seeds.
  ...RESPONSE_ROUTES,
  route(
    "POST /v1/jobs",
    fc.record({
      auth: apiAuthArb,
      body: bodyArb(_jobBase),
      type: contentType,
      extra: extraHeaders,
    }),
    (c, marker) => ({
      method: "POST",
      path: "/v1/jobs",
      headers: [...authHeader(c.auth), ["content-type", c.type], ...c.extra],
      body: renderBody(c.body, marker),
    }),
  ),
  route(
    "GET|DELETE|POST /v1/jobs/{id}[/run|pause|resume]",
    fc.record({
      auth: apiAuthArb,
      job: _jobIdArb,
      how: pathEncoding,
      action: fc.constantFrom("GET ", "DELETE ", "POST /run", "POST /pause", "POST /resume"),
      extra: extraHeaders,
    }),
    (c) => {
      const id = "real" in c.job ? "job_YXBpOmZ6am9iYQ_1" : c.job.id;
      const [method, suffix] = c.action.split(" ");
      return {
        method,
        path: `/v1/jobs/${encodePath(id, c.how)}${suffix}`,
        headers: [...authHeader(c.auth), ...c.extra],
      };
    },
  ),
  route(
    "GET /v1/sessions",
    fc.record({
      auth: apiAuthArb,
      params: fc.array(
        fc.tuple(
          fc.constantFrom("limit", "cursor", "platform", "status", "order", "x"),
          fc.oneof(
            fc.constantFrom("1", "20", "100", "0", "101", "-1", "1e2", "", "idle", "queued"),
            fc.constantFrom("running", "waiting_for_approval", "created", "activity", "api"),
            // Cursors: well-formed, well-formed with wrong fields, base64 junk, anything.
            fc.record({
              o: fc.constantFrom("created", "activity", "x"),
              t: fc.integer(),
              k: fc.string(),
            })
              .map((c) => btoa(JSON.stringify(c))),
            fc.base64String({ maxLength: 40 }),
            fc.string({ maxLength: 40 }),
          ),
        ),
        { maxLength: 5 },
      ),
      extra: extraHeaders,
    }),
    (c) => ({
      method: "GET",
      path: `/v1/sessions?${new URLSearchParams(c.params)}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
] as unknown as RouteFuzz<never>[];

/**
 * POST /mcp: JSON-RPC messages, batches and junk, with Accept and key variations. Its own export,
 * fuzzed after every other route, so that theirs keep their seeds.
 */
export const MCP_ROUTE: RouteFuzz<never> = route(
  "POST /mcp",
  fc.record({
    auth: apiAuthArb,
    body: bodyArb(_mcpBase),
    accept: fc.oneof(
      { weight: 8, arbitrary: fc.constant("application/json, text/event-stream") },
      {
        weight: 2,
        arbitrary: fc.constantFrom("application/json", "text/event-stream", "*/*", "", "x/y"),
      },
    ),
    type: contentType,
    extra: extraHeaders,
  }),
  (c, marker) => {
    const body = renderBody(c.body, marker);
    return {
      method: "POST",
      path: "/mcp",
      headers: [
        ...authHeader(c.auth),
        ["content-type", c.type],
        ...(c.accept ? [["accept", c.accept] as [string, string]] : []),
        ...c.extra,
      ],
      body,
      sseAllowed: _mcpAsksProgress(body),
    };
  },
) as unknown as RouteFuzz<never>;

/** Any method on any path (mostly near real routes): whatever it is, a 2xx/4xx JSON answer. */
export const RANDOM_ROUTE: RouteFuzz<never> = route(
  "random method and path",
  fc.record({
    method: fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
      },
      // workerd's HTTP server knows only these methods (others get its own 501 text/plain, before
      // any Worker code runs; so does "M-SEARCH", which it spells MSEARCH); fetch normalises the lowercase ones and refuses TRACE/CONNECT.
      {
        weight: 2,
        arbitrary: fc.constantFrom(..._KJ_METHODS),
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
            "/v1/responses",
            "/v1/sessions",
            "/v1/chat",
            "/v1/chat/completions",
            "/v1/models",
            "/webhooks",
            "/webhooks/generic",
            "/healthz",
          ),
          fc.array(_segment, { maxLength: 3 }),
          fc.boolean(),
        ).map(([prefix, segs, slash]) =>
          [prefix, ...segs].join("/").replace(/^(?!\/)/, "/") + (slash ? "/" : "")
        ),
      },
    ),
    query: fc.option(fc.webQueryParameters()),
    auth: apiAuthArb,
    body: fc.option(bodyArb(_universalBase)),
    extra: extraHeaders,
  }),
  (c, marker) => {
    const bodyless = ["GET", "HEAD"].includes(c.method.toUpperCase());
    const path = (c.path.startsWith("/") ? c.path : `/${c.path}`) +
      (c.query === null ? "" : `?${c.query}`);
    return {
      method: c.method,
      path,
      headers: [...authHeader(c.auth), ...c.extra],
      ...(c.body && !bodyless ? { body: renderBody(c.body, marker) } : {}),
      sseAllowed: /^\/v1\/runs\/[^/]+\/events\/?$/.test(path) ||
        (/^\/v1\/(chat\/completions|responses)\/?$/.test(path) && c.body !== null && !bodyless &&
          asksForStream(renderBody(c.body, marker))),
    };
  },
) as unknown as RouteFuzz<never>;

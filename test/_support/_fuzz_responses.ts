// The fuzzer's Responses API routes: create (JSON, stream, background, chained), retrieve, delete, cancel, input items; Deno.
import fc from "fast-check";
import { API_KEY } from "./clients.ts";
import {
  asksForStream,
  authHeader,
  bodyArb,
  contentType,
  extraHeaders,
  MARK,
  renderBody,
  route,
  type RouteFuzz,
  sessionSeqIdArb,
} from "./_fuzz_gen.ts";

/** Response ids returned by POST /v1/responses, reused by the other routes and as previous ids. */
const _responseIds: string[] = [];

/** Response ids: real ones (an index into those seen), well-formed unknown ones, junk. */
const _idArb = sessionSeqIdArb("resp");

function _id(spec: { real: number } | { id: string }): string {
  if (!("real" in spec)) return spec.id;
  return _responseIds.length ? _responseIds[spec.real % _responseIds.length] : "resp_ZnpfMQ_1";
}

/** A valid POST /v1/responses body; text fields carry MARK. */
const _createBase: fc.Arbitrary<unknown> = fc.record({
  items: fc.boolean(),
  instructions: fc.boolean(),
  stream: fc.boolean(),
  background: fc.boolean(),
  store: fc.boolean(),
  metadata: fc.boolean(),
  previous: fc.option(fc.nat(), { freq: 2 }),
}).map((r) => ({
  model: "any",
  input: r.items
    ? [
      { role: "user", content: `${MARK} earlier` },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] },
      { role: "user", content: [{ type: "input_text", text: MARK }] },
    ]
    : MARK,
  ...(r.instructions ? { instructions: "be brief" } : {}),
  ...(r.stream ? { stream: true } : {}),
  ...(r.background ? { background: true } : {}),
  ...(r.store || r.background ? {} : { store: false }),
  ...(r.metadata ? { metadata: { k: "v" } } : {}),
  ...(r.previous !== null && _responseIds.length
    ? { previous_response_id: _responseIds[r.previous % _responseIds.length] }
    : {}),
}));

/** The authorization header: the key mostly, sometimes a wrong one or none. */
const _authArb = fc.constantFrom<string | null>(
  `Bearer ${API_KEY}`,
  `Bearer ${API_KEY}`,
  `Bearer ${API_KEY}`,
  `Bearer ${API_KEY}x`,
  null,
);

/** An id route: `method /v1/responses/{id}{suffix}`. */
function _idRoute(method: string, suffix: string): RouteFuzz<never> {
  return route(
    `${method} /v1/responses/{id}${suffix}`,
    fc.record({ auth: _authArb, id: _idArb, extra: extraHeaders }),
    (c) => ({
      method,
      path: `/v1/responses/${encodeURIComponent(_id(c.id))}${suffix}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ) as unknown as RouteFuzz<never>;
}

/** The Responses API routes. */
export const RESPONSE_ROUTES: RouteFuzz<never>[] = [
  route(
    "POST /v1/responses",
    fc.record({
      auth: _authArb,
      body: bodyArb(_createBase, [], { large: true }),
      type: contentType,
      extra: extraHeaders,
    }),
    (c, marker) => {
      const body = renderBody(c.body, marker);
      return {
        method: "POST",
        path: "/v1/responses",
        headers: [...authHeader(c.auth), ["content-type", c.type], ...c.extra],
        body,
        sseAllowed: asksForStream(body),
      };
    },
    (res, text) => {
      if (res.status !== 200 || !res.headers.get("content-type")?.includes("json")) return;
      const body = JSON.parse(text);
      if (body.store !== false && typeof body.id === "string") _responseIds.push(body.id);
    },
  ) as unknown as RouteFuzz<never>,
  _idRoute("GET", ""),
  _idRoute("GET", "/input_items"),
  _idRoute("POST", "/cancel"),
  _idRoute("DELETE", ""),
];

// API tenants and browser callers in workerd: each tenant's sessions, runs and responses its own, admin reach, CORS, security headers; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  API_KEY,
  chat,
  chatReply,
  type Json,
  json,
  sessionState,
  until,
  withBaton,
} from "./_support/clients.ts";
import { hashHex, parseResponseId, responseId } from "../lib/openai/mod.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-key-0123456789";
const APP = "https://app.example";
const BETA = "beta-key-0123456789";
/** Two named tenants beside the default one (`API_KEY`), which stays the admin. */
const TENANTS = { GATEWAY_API_KEYS: `acme:${ACME}, beta:${BETA}` };
/** Keys listed under malformed tenant names (dotted, spaced, 33 characters): each is ignored. */
const MALFORMED = `a.b:dotted-key,bad name:spaced-key,${"n".repeat(33)}:long-key`;

// One Worker for the tenant tests (the malformed entries beside them, ignored), one for the listed
// CORS origins; ADMIN_API_KEYS=acme and CORS_ORIGINS=* each start their own.
const baton = sharedBaton({
  vars: { GATEWAY_API_KEYS: `${TENANTS.GATEWAY_API_KEYS},${MALFORMED}` },
});
const listed = sharedBaton({
  vars: { CORS_ORIGINS: `${APP}, HTTPS://Other.example/` },
  label: "listed origins",
});

/** A request to the Worker with `key` as the bearer token. */
function as(
  worker: TestWorker,
  key: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  return worker.fetch(path, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...init.headers,
    },
  });
}

/** Asserts a JSON error with `status` and `type`, and reads the body so the connection is freed. */
async function expectError(res: Response, status: number, type: string): Promise<void> {
  const body = await json(res);
  assertStrictEquals(res.status, status, JSON.stringify(body));
  assertStrictEquals(body.error?.type, type, JSON.stringify(body));
}

/** The `openai` client of a tenant's key, optionally pinned to an X-Session-Id. */
function client(worker: TestWorker, key: string, session?: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: key,
    timeout: 8_000,
    maxRetries: 0,
    ...(session ? { defaultHeaders: { "x-session-id": session } } : {}),
  });
}

const session = (key: string) => `/v1/sessions/${encodeURIComponent(key)}`;

baton.test("GET /v1/sessions/{key}: another tenant's session is 404 (read, stop, reset); the owner and the admin read it", async (worker) => {
  await chatReply(await chat(worker, "acme's secret", { session: "s1", key: ACME }));
  const key = "api.acme:s1";
  for (const path of [session(key), session("api:s1")]) {
    await expectError(await as(worker, BETA, path), 404, "not_found");
  }
  for (const command of ["stop", "reset"]) {
    await expectError(
      await as(worker, BETA, `${session(key)}/${command}`, { method: "POST" }),
      404,
      "not_found",
    );
  }
  const own = await json(await as(worker, ACME, session(key)));
  assertEquals(own.messages.map((m: Json) => m.content), ["acme's secret", "acme's secret"]);
  // The session lives under the tenant's own key; the default tenant's `api:s1` is another one.
  assertEquals((await sessionState(worker, key)).messages.length, 2, "reset by beta: refused");
  assertEquals((await sessionState(worker, "api:s1")).messages, []);
});

baton.test(
  "GET /v1/runs/{id}, /events and /stop: another tenant's run is 404 and keeps running",
  async (worker, fake) => {
    fake.script(holdOn("long job"));
    const started = await as(worker, ACME, "/v1/runs", {
      method: "POST",
      body: JSON.stringify({ input: "long job", session: "r1" }),
    });
    assertStrictEquals(started.status, 202);
    const { run_id: id } = await json(started);
    await fake.waitForRequests(1);
    await expectError(await as(worker, BETA, `/v1/runs/${id}`), 404, "not_found");
    await expectError(await as(worker, BETA, `/v1/runs/${id}/events`), 404, "not_found");
    await expectError(
      await as(worker, BETA, `/v1/runs/${id}/stop`, { method: "POST" }),
      404,
      "not_found",
    );
    assertStrictEquals((await json(await as(worker, ACME, `/v1/runs/${id}`))).status, "running");
    fake.release();
    await until(
      async () => (await json(await as(worker, ACME, `/v1/runs/${id}`))).status === "completed",
      "acme's run completed, not stopped",
    );
  },
);

baton.test("GET/DELETE /v1/responses/{id} and input_items: another tenant's response is 404 and survives", async (worker) => {
  const created = await client(worker, ACME).responses.create({ model: "m", input: "mine" });
  const beta = client(worker, BETA);
  for (const path of [`/${created.id}`, `/${created.id}/input_items`]) {
    await expectError(await as(worker, BETA, `/v1/responses${path}`), 404, "not_found");
  }
  for (const path of [`/${created.id}`, `/${created.id}/cancel`]) {
    const method = path.endsWith("cancel") ? "POST" : "DELETE";
    await expectError(
      await as(worker, BETA, `/v1/responses${path}`, { method }),
      404,
      "not_found",
    );
  }
  const chained = await assertRejects(() =>
    beta.responses.create({ model: "m", input: "x", previous_response_id: created.id })
  );
  assert(chained instanceof OpenAI.NotFoundError, String(chained));
  const got = await client(worker, ACME).responses.retrieve(created.id);
  assertStrictEquals(got.output_text, "mine", "beta's DELETE deleted nothing");
});

baton.test(
  "POST /v1/chat/completions: one X-Session-Id in two tenants is two conversations",
  async (worker, fake) => {
    const say = (key: string, content: string) =>
      client(worker, key, "shared").chat.completions.create({
        model: "m",
        messages: [{ role: "user", content }],
      });
    await say(ACME, "acme one");
    await say(BETA, "beta one");
    const reply = await say(ACME, "acme two");
    assertStrictEquals(reply.choices[0].message.content, "acme two");
    const seen = fake.requests[2].body.messages
      .filter((m: Json) => m.role !== "system")
      .map((m: Json) => m.content);
    assertEquals(seen, ["acme one", "acme one", "acme two"], "beta's message is not in acme's");
    const beta = await sessionState(worker, "api.beta:shared");
    assertEquals(beta.messages.map((m) => m.content), ["beta one", "beta one"]);
  },
);

baton.test("POST /v1/chat/completions without X-Session-Id: the same first message in two tenants gets two sessions", async (worker) => {
  const first = async (key: string) => {
    const res = await chat(worker, "hello", { key });
    await chatReply(res);
    return res.headers.get("x-session-id");
  };
  // A first message's session is named by its text (so a retry finds its outcome there) and by
  // its tenant: each tenant's is its own, empty one, and the names tell nothing across tenants.
  const [acme, beta] = [await first(ACME), await first(BETA)];
  assert(acme?.startsWith("f") && beta?.startsWith("f"), `${acme} ${beta}: text-named`);
  assert(acme !== beta, "beta's first message named like acme's");
  // The default tenant hashes as before tenants ("api"): a deployment's retries still land.
  assertStrictEquals(await first(API_KEY), `f${await hashHex(["api", "", "hello"], 16)}`);
});

baton.test("POST /v1/runs with Idempotency-Key: a key is per tenant, neither replayed nor refused across tenants", async (worker) => {
  const start = (key: string, input: string) =>
    as(worker, key, "/v1/runs", {
      method: "POST",
      headers: { "idempotency-key": "same-key" },
      body: JSON.stringify({ input }),
    });
  const acme = await start(ACME, "acme's input");
  assertStrictEquals(acme.status, 202);
  const beta = await start(BETA, "beta's input");
  assertStrictEquals(beta.status, 202, "another tenant's key: not idempotency_key_reused");
  const [a, b] = [await json(acme), await json(beta)];
  assert(a.session !== b.session, "two sessions");
  assertEquals((await json(await start(BETA, "beta's input"))).run_id, b.run_id, "a replay");
  // The default tenant's key records are those from before tenants (hashed with "api").
  const fallback = await json(await start(API_KEY, "default's input"));
  assertStrictEquals(fallback.session, `rk${(await hashHex(["api", "same-key"])).slice(0, 32)}`);
});

baton.test("POST /v1/runs: one session id in two tenants gives two run ids, each its tenant's; an id without a tenant still routes", async (worker) => {
  const start = async (key: string) => {
    const res = await as(worker, key, "/v1/runs", {
      method: "POST",
      body: JSON.stringify({ input: "same words", session: "same-run" }),
    });
    assertStrictEquals(res.status, 202);
    return (await json(res)).run_id as string;
  };
  const [acme, beta] = [await start(ACME), await start(BETA)];
  assert(acme !== beta, `${acme}: one id for two tenants' runs`);
  for (const [key, id] of [[ACME, acme], [BETA, beta]]) {
    const run = await json(await as(worker, key, `/v1/runs/${id}`));
    assertStrictEquals(run.session, "same-run", JSON.stringify(run));
  }
  await expectError(await as(worker, BETA, `/v1/runs/${acme}`), 404, "not_found");
  // An id from before tenants were named in it (`run_<base64url session id>_<seq>`): the caller's.
  const bare = `run_${btoa("same-run").replace(/=+$/, "")}_1`;
  const old = await json(await as(worker, BETA, `/v1/runs/${bare}`));
  assertStrictEquals(old.session, "same-run", JSON.stringify(old));
});

baton.test(
  "POST /v1/responses: a response id names its tenant; GET, input_items, DELETE and previous_response_id route by it, an id without a tenant still routes for its owner",
  async (worker, fake) => {
    const acme = client(worker, ACME);
    const first = await acme.responses.create({ model: "m", input: "acme's first" });
    const named = parseResponseId(first.id);
    assertStrictEquals(named?.tenant, "acme", `${first.id}: names no tenant`);
    const { session, seq } = named!;
    // One session id and seq in two tenants: two ids. Beta has no such response; acme's id with
    // beta's name is beta's, so 404 for acme.
    const betas = responseId("beta", session, seq);
    assert(betas !== first.id, betas);
    await expectError(await as(worker, BETA, `/v1/responses/${betas}`), 404, "not_found");
    await expectError(await as(worker, ACME, `/v1/responses/${betas}`), 404, "not_found");
    // An id from before tenants were named in it (`resp_<base64url session id>_<seq>`): the caller's.
    const bare = `resp_${
      btoa(session).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")
    }_${seq}`;
    assertStrictEquals((await acme.responses.retrieve(bare)).output_text, "acme's first");
    await expectError(await as(worker, BETA, `/v1/responses/${bare}`), 404, "not_found");
    const items = await json(await as(worker, ACME, `/v1/responses/${first.id}/input_items`));
    assertEquals(items.data.map((i: Json) => i.content?.[0]?.text), ["acme's first"]);
    // Both forms continue the conversation in acme's session.
    for (const previous of [first.id, bare]) {
      const next = await acme.responses.create({
        model: "m",
        input: `after ${previous === bare ? "bare" : "named"}`,
        previous_response_id: previous,
      });
      assertStrictEquals(parseResponseId(next.id)?.tenant, "acme", next.id);
      const seen = fake.requests.at(-1)!.body.messages.map((m: Json) => m.content);
      assert(seen.includes("acme's first"), JSON.stringify(seen));
    }
    await expectError(
      await as(worker, BETA, "/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "m", input: "x", previous_response_id: first.id }),
      }),
      404,
      "not_found",
    );
    assertStrictEquals(
      (await json(await as(worker, ACME, `/v1/responses/${first.id}`, { method: "DELETE" })))
        .deleted,
      true,
    );
    await expectError(await as(worker, ACME, `/v1/responses/${bare}`), 404, "not_found");
  },
);

baton.test("GET /v1/sessions/telegram:1: 404 for a named tenant, readable by the default (admin) tenant", async (worker) => {
  await expectError(await as(worker, ACME, session("telegram:1")), 404, "not_found");
  const res = await as(worker, API_KEY, session("telegram:1"));
  assertStrictEquals(res.status, 200);
  assertStrictEquals((await json(res)).key, "telegram:1");
  assertStrictEquals((await as(worker, API_KEY, session("api.acme:x"))).status, 200);
});

Deno.test("ADMIN_API_KEYS=acme makes acme the admin and the default tenant not", async () => {
  await withBaton(async (worker) => {
    for (const key of ["telegram:1", "api.beta:x"]) {
      assertStrictEquals((await as(worker, ACME, session(key))).status, 200, key);
    }
    for (const key of ["telegram:1", "api.acme:x"]) {
      await expectError(await as(worker, API_KEY, session(key)), 404, "not_found");
    }
    assertStrictEquals((await as(worker, API_KEY, session("api:x"))).status, 200, "its own");
  }, { vars: { ...TENANTS, ADMIN_API_KEYS: "acme" } });
});

baton.test("API keys: a wrong key is 401; a key listed under a malformed tenant name is ignored (401)", async (worker) => {
  for (const key of [ACME, BETA, API_KEY]) {
    assertStrictEquals((await as(worker, key, "/v1/models")).status, 200, key);
  }
  for (const key of ["wrong", `${ACME}x`, "dotted-key", "spaced-key", "long-key"]) {
    await expectError(await as(worker, key, "/v1/models"), 401, "invalid_api_key");
  }
});

/** A CORS preflight for a POST with the key and a JSON body. */
function preflight(worker: TestWorker, origin: string, path = "/v1/chat/completions") {
  return worker.fetch(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type,x-session-id",
    },
  });
}

/** The response's `access-control-*` headers. */
const corsHeaders = (res: Response) =>
  [...res.headers.keys()].filter((name) => name.startsWith("access-control-"));

listed.test("CORS_ORIGINS: a listed origin's preflight is allowed before method and key checks; another's is 403", async (worker) => {
  const allowed = await preflight(worker, APP);
  await allowed.body?.cancel();
  assertStrictEquals(allowed.status, 204);
  assertStrictEquals(allowed.headers.get("access-control-allow-origin"), APP);
  assert(allowed.headers.get("access-control-allow-methods")?.includes("POST"));
  const headers = allowed.headers.get("access-control-allow-headers")?.toLowerCase() ?? "";
  for (const name of ["authorization", "content-type", "idempotency-key", "x-session-id"]) {
    assert(headers.includes(name), `${name} in ${headers}`);
  }
  // Listed with a trailing slash and other case: still the same origin.
  const second = await preflight(worker, "https://other.example", "/v1/runs/x/stop");
  await second.body?.cancel();
  assertStrictEquals(second.headers.get("access-control-allow-origin"), "https://other.example");
  const refused = await preflight(worker, "https://evil.example");
  await expectError(refused, 403, "cors_origin_not_allowed");
  assertEquals(corsHeaders(refused), []);
});

listed.test("CORS_ORIGINS: a listed origin's requests get CORS headers, errors too; another origin's none", async (worker) => {
  const ok = await as(worker, API_KEY, "/v1/models", { headers: { origin: APP } });
  await ok.body?.cancel();
  assertStrictEquals(ok.status, 200);
  assertStrictEquals(ok.headers.get("access-control-allow-origin"), APP);
  assertEquals(
    ok.headers.get("access-control-expose-headers")?.toLowerCase().split(","),
    ["x-session-id", "retry-after"],
  );
  assert(ok.headers.get("vary")?.toLowerCase().includes("origin"));
  const denied = await as(worker, "wrong", "/v1/models", { headers: { origin: APP } });
  await expectError(denied, 401, "invalid_api_key");
  assertStrictEquals(denied.headers.get("access-control-allow-origin"), APP, "readable error");
  const other = await as(worker, API_KEY, "/v1/models", {
    headers: { origin: "https://evil.example" },
  });
  await other.body?.cancel();
  assertEquals(corsHeaders(other), []);
});

Deno.test("CORS_ORIGINS=* allows every origin, echoed", async () => {
  await withBaton(async (worker) => {
    const res = await preflight(worker, "https://anywhere.example");
    await res.body?.cancel();
    assertStrictEquals(res.status, 204);
    assertStrictEquals(res.headers.get("access-control-allow-origin"), "https://anywhere.example");
  }, { vars: { CORS_ORIGINS: "*" } });
});

baton.test("CORS_ORIGINS unset: no CORS header at all, and a preflight is refused", async (worker) => {
  const refused = await preflight(worker, APP);
  await expectError(refused, 403, "cors_origin_not_allowed");
  assertEquals(corsHeaders(refused), []);
  const res = await as(worker, API_KEY, "/v1/models", { headers: { origin: APP } });
  await res.body?.cancel();
  assertStrictEquals(res.status, 200);
  assertEquals(corsHeaders(res), []);
  assertStrictEquals(res.headers.get("vary"), null);
});

baton.test("every response carries X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer", async (worker) => {
  const answers: [string, Response][] = [
    ["200", await worker.fetch("/healthz")],
    ["404", await worker.fetch("/nowhere")],
    ["401", await worker.fetch("/v1/models")],
    ["405", await worker.fetch("/v1/models", { method: "DELETE" })],
    ["400", await as(worker, API_KEY, "/v1/chat/completions", { method: "POST", body: "{" })],
    ["webhook 401", await worker.fetch("/webhooks/generic", { method: "POST", body: "{}" })],
    ["SSE", await chat(worker, "streamed", { stream: true })],
  ];
  for (const [what, res] of answers) {
    await res.text();
    assertStrictEquals(res.headers.get("x-content-type-options"), "nosniff", what);
    assertStrictEquals(res.headers.get("referrer-policy"), "no-referrer", what);
  }
  assertEquals(answers.slice(0, 4).map(([, res]) => res.status), [200, 404, 401, 405]);
});

baton.test("POST /v1/chat/completions: one X-Session-Id in two tenants gets two completion ids; a retry its own again", async (worker) => {
  const complete = async (key: string, stream = false) => {
    const res = await as(worker, key, "/v1/chat/completions", {
      method: "POST",
      headers: { "x-session-id": "same-ids", "idempotency-key": `ids-${key}-${stream}` },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream }),
    });
    assertStrictEquals(res.status, 200);
    if (!stream) return (await json(res)).id as string;
    const first = (await res.text()).split("\n").find((line) => line.startsWith("data: {"))!;
    return JSON.parse(first.slice("data: ".length)).id as string;
  };
  // Run 1 of session `same-ids` in each tenant: ids made from the session id alone coincide.
  const [acme, beta] = [await complete(ACME), await complete(BETA)];
  assert(acme.startsWith("chatcmpl-") && beta.startsWith("chatcmpl-"), `${acme} ${beta}`);
  assert(acme !== beta, `one id in two tenants: ${acme}`);
  assertStrictEquals(await complete(ACME), acme, "a retry (same Idempotency-Key) keeps its id");
  // Streamed: run 2 of each tenant's session.
  const [acmeStream, betaStream] = [await complete(ACME, true), await complete(BETA, true)];
  assert(acmeStream !== betaStream, `one streamed id in two tenants: ${acmeStream}`);
});

listed.done();
baton.done();

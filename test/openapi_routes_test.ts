// GET /openapi.json against every route it names: one real call per operation (JSON bodies, SSE frames, bytes' types) validated, and a check that none was left out; Deno + Miniflare.
import { Ajv2020 } from "ajv/dist/2020.js";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, json, postJson, until } from "./_support/clients.ts";
import { deliver, DRIVERS } from "./_support/drivers/mod.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { twilioDriver } from "./_support/drivers/twilio.ts";
import { askThenEcho, holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { mediaFileUrl } from "../lib/media/mod.ts";
import type { FakeModel } from "../lib/testing/fake_model.ts";

const LINK_SECRET = "openapi-routes-link-secret-0123456789";
// Twilio signs the URL it calls: its driver names it in PUBLIC_URL, which signed links use too.
const PUBLIC_URL = twilioDriver.vars().PUBLIC_URL;
const VERIFY_TOKEN = "wa-verify-token_42";

// Pairing policy: a platform's unknown sender gets a code, so the access routes have one to
// approve; API tenants are not gated by it. session_info asks for approval, so a run can wait.
const baton = sharedBaton({
  media: true,
  vars: {
    ...Object.assign({}, ...DRIVERS.map((d) => d.vars())),
    ACCESS_POLICY: "pairing",
    MEMORY: "on",
    APPROVAL_TOOLS: "session_info",
    MEDIA_URL_SECRET: LINK_SECRET,
  },
  label: "every route",
});

const auth = { authorization: `Bearer ${API_KEY}` };

/**
 * Routes the tests cannot call offline, each with why. Only these may go without a validated
 * real answer (the last test fails on any other).
 */
const UNCALLED: Record<string, string> = {};

/** `method path` of every operation whose real answer a test validated. */
const covered = new Set<string>();

let _doc: Json | undefined;
async function _document(worker: TestWorker): Promise<Json> {
  return _doc ??= await json(await worker.fetch("/openapi.json"));
}

/** The document's answer of `method path` for `status`, failing when it lists none. */
function _answer(doc: Json, path: string, method: string, status: number): Json {
  const answer = doc.paths[path]?.[method]?.responses?.[String(status)];
  assert(answer, `the document has no ${status} for ${method.toUpperCase()} ${path}`);
  return answer;
}

/** `value` validates against `schema` (the document's components resolvable from it). */
function _validate(doc: Json, schema: Json, value: unknown, what: string): void {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile({ ...schema, components: doc.components });
  assert(
    validate(value),
    `${what}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(value)?.slice(0, 2_000)}`,
  );
}

/**
 * Checks a real answer against the document: its status is listed for `method path`, its body
 * (JSON) validates against that status's schema, or (another type) its content type is one the
 * answer names, or (no body documented) it has none. Marks the operation covered.
 */
async function check(
  worker: TestWorker,
  path: string,
  method: string,
  res: Response,
  expectStatus?: number,
): Promise<Json> {
  const doc = await _document(worker);
  const what = `${method.toUpperCase()} ${path} ${res.status}`;
  const text = await res.text();
  if (expectStatus !== undefined) assertStrictEquals(res.status, expectStatus, `${what}: ${text}`);
  const answer = _answer(doc, path, method, res.status);
  const type = res.headers.get("content-type")?.split(";")[0].trim() ?? "";
  const content: Json = answer.content;
  covered.add(`${method} ${path}`);
  if (!content) {
    assertStrictEquals(text, "", `${what}: a body the document does not describe`);
    return undefined;
  }
  if (type === "application/json") {
    const schema = content["application/json"]?.schema;
    assert(schema, `${what} answered JSON; the document names ${Object.keys(content)}`);
    const body = JSON.parse(text);
    _validate(doc, schema, body, what);
    return body;
  }
  const ranges = Object.keys(content);
  assert(
    ranges.some((r) =>
      r === type || r === "*/*" || (r.endsWith("/*") && type.startsWith(r.slice(0, -1)))
    ),
    `${what} answered ${type}; the document names ${ranges}`,
  );
  return text;
}

/** GET/DELETE/POST `path` with the test key (a JSON body when given). */
function call(worker: TestWorker, method: string, path: string, body?: unknown) {
  return worker.fetch(path, {
    method,
    headers: body === undefined ? auth : { ...auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Starts a run of `input` in `session`; its 202 answer, validated. */
async function startRun(worker: TestWorker, input: string, session: string): Promise<Json> {
  const res = await postJson(worker, "/v1/runs", { input, session });
  return await check(worker, "/v1/runs", "post", res, 202);
}

async function untilStatus(worker: TestWorker, id: string, status: string): Promise<void> {
  await until(
    async () => (await json(await call(worker, "GET", `/v1/runs/${id}`))).status === status,
    `run ${id} ${status}`,
  );
}

/** The fake model: "remember: <fact>" calls `remember`; otherwise an echo. */
function _scriptMemory(fake: FakeModel): void {
  fake.script((req) => {
    const last = req.body.messages.at(-1);
    if (last.role === "tool") return { kind: "text", text: `noted: ${last.content}` };
    const fact = /^remember: (.*)$/s.exec(req.lastUserText)?.[1];
    if (fact !== undefined) return { kind: "tool_call", name: "remember", args: { fact } };
    return { kind: "text", text: `echo: ${req.lastUserText}` };
  });
}

baton.test(
  "openapi routes: meta, models, chat completions, responses (get, input_items, cancel, delete)",
  async (worker, fake) => {
    await check(worker, "/healthz", "get", await worker.fetch("/healthz"), 200);
    await check(worker, "/openapi.json", "get", await worker.fetch("/openapi.json"), 200);
    const models = await check(
      worker,
      "/v1/models",
      "get",
      await call(worker, "GET", "/v1/models"),
      200,
    );
    const model = encodeURIComponent(models.data[0].id);
    await check(
      worker,
      "/v1/models/{id}",
      "get",
      await call(worker, "GET", `/v1/models/${model}`),
      200,
    );

    const completion = await postJson(worker, "/v1/chat/completions", {
      model: "test",
      messages: [{ role: "user", content: "openapi routes hello" }],
    }, { "x-session-id": "oar-chat" });
    await check(worker, "/v1/chat/completions", "post", completion, 200);

    const created = await check(
      worker,
      "/v1/responses",
      "post",
      await postJson(worker, "/v1/responses", { input: "openapi routes responses" }),
      200,
    );
    await check(
      worker,
      "/v1/responses/{id}",
      "get",
      await call(worker, "GET", `/v1/responses/${created.id}`),
      200,
    );
    const items = await check(
      worker,
      "/v1/responses/{id}/input_items",
      "get",
      await call(worker, "GET", `/v1/responses/${created.id}/input_items`),
      200,
    );
    assert(items.data.length > 0, "the response's input");
    // A completed response cannot be cancelled: the 409 the document lists.
    await check(
      worker,
      "/v1/responses/{id}/cancel",
      "post",
      await call(worker, "POST", `/v1/responses/${created.id}/cancel`),
      409,
    );
    // A background one still running can: 200 with the response, cancelled.
    fake.script(holdOn("openapi background"));
    // Counted before the POST: the held model call may arrive before its 200 does.
    const before = fake.requests.length;
    const queued = await check(
      worker,
      "/v1/responses",
      "post",
      await postJson(worker, "/v1/responses", { input: "openapi background", background: true }),
      200,
    );
    await fake.waitForRequests(before + 1);
    const cancelled = await check(
      worker,
      "/v1/responses/{id}/cancel",
      "post",
      await call(worker, "POST", `/v1/responses/${queued.id}/cancel`),
      200,
    );
    assertEquals(cancelled.status, "cancelled");
    await check(
      worker,
      "/v1/responses/{id}",
      "delete",
      await call(worker, "DELETE", `/v1/responses/${created.id}`),
      200,
    );
  },
);

baton.test("openapi routes: runs (events as SSE, stop, steer, approval)", async (worker, fake) => {
  const run = await startRun(worker, "openapi events", "oar-run");
  await untilStatus(worker, run.run_id, "completed");
  await check(
    worker,
    "/v1/runs/{id}",
    "get",
    await call(worker, "GET", `/v1/runs/${run.run_id}`),
    200,
  );
  const events = await call(worker, "GET", `/v1/runs/${run.run_id}/events`);
  const doc = await _document(worker);
  const stream = _answer(doc, "/v1/runs/{id}/events", "get", events.status)
    .content["text/event-stream"];
  const frames = await check(worker, "/v1/runs/{id}/events", "get", events, 200) as string;
  const data = frames.split("\n").filter((l) => l.startsWith("data:")).map((l) =>
    JSON.parse(l.slice(5))
  );
  assert(data.length >= 2, frames);
  assert(stream.schema?.$ref || stream.schema?.anyOf, "the event frames have a schema");
  for (const frame of data) _validate(doc, stream.schema, frame, "a run event's data");
  assertEquals(data.at(-1).type, "run.completed");

  fake.script(holdOn("openapi hold", "re "));
  const held = await startRun(worker, "openapi hold", "oar-steer");
  await untilStatus(worker, held.run_id, "running");
  await check(
    worker,
    "/v1/runs/{id}/steer",
    "post",
    await call(worker, "POST", `/v1/runs/${held.run_id}/steer`, { input: "mind this" }),
    202,
  );
  await check(
    worker,
    "/v1/runs/{id}/stop",
    "post",
    await call(worker, "POST", `/v1/runs/${held.run_id}/stop`),
    200,
  );
  fake.release();
  await until(async () => {
    const status = (await json(await call(worker, "GET", `/v1/runs/${held.run_id}`))).status;
    return status === "cancelled" || status === "completed";
  }, "the held run ended");

  fake.script(askThenEcho);
  const asking = await startRun(worker, "who am i", "oar-approve");
  await untilStatus(worker, asking.run_id, "waiting_for_approval");
  await check(
    worker,
    "/v1/runs/{id}/approval",
    "post",
    await call(worker, "POST", `/v1/runs/${asking.run_id}/approval`, { choice: "once" }),
    200,
  );
  await untilStatus(worker, asking.run_id, "completed");
});

baton.test("openapi routes: sessions (list, get, inspect, media, stop, reset, delete) and signed /media", async (worker) => {
  const PNG_B64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
  const res = await postJson(worker, "/v1/chat/completions", {
    model: "m",
    messages: [{
      role: "user",
      content: [{ type: "text", text: "look" }, {
        type: "image_url",
        image_url: { url: `data:image/png;base64,${PNG_B64}` },
      }],
    }],
  }, { "x-session-id": "oar-media" });
  await check(worker, "/v1/chat/completions", "post", res, 200);
  const key = encodeURIComponent("api:oar-media");

  await until(async () => {
    const list = await json(await call(worker, "GET", "/v1/sessions?limit=100"));
    return list.data?.some((s: Json) =>
      s.key === "api:oar-media" || s.session_key === "api:oar-media"
    );
  }, "the session listed");
  await check(
    worker,
    "/v1/sessions",
    "get",
    await call(worker, "GET", "/v1/sessions?limit=100"),
    200,
  );
  const state = await check(
    worker,
    "/v1/sessions/{key}",
    "get",
    await call(worker, "GET", `/v1/sessions/${key}`),
    200,
  );
  await check(
    worker,
    "/v1/sessions/{key}/inspect",
    "get",
    await call(worker, "GET", `/v1/sessions/${key}/inspect`),
    200,
  );
  const [image] = state.messages[0].media;
  await check(
    worker,
    "/v1/sessions/{key}/media/{scope}/{hash}",
    "get",
    await call(worker, "GET", `/v1/sessions/${key}/media/${image.id}`),
    200,
  );
  const link = new URL(await mediaFileUrl(PUBLIC_URL, LINK_SECRET, image.id, Date.now() / 1000));
  await check(
    worker,
    "/media/{scope}/{hash}",
    "get",
    await worker.fetch(link.pathname + link.search),
    200,
  );

  await check(
    worker,
    "/v1/sessions/{key}/stop",
    "post",
    await call(worker, "POST", `/v1/sessions/${key}/stop`),
    200,
  );
  await check(
    worker,
    "/v1/sessions/{key}/reset",
    "post",
    await call(worker, "POST", `/v1/sessions/${key}/reset`),
    200,
  );
  await check(
    worker,
    "/v1/sessions/{key}",
    "delete",
    await call(worker, "DELETE", `/v1/sessions/${key}`),
    200,
  );
  await check(worker, "/v1/usage", "get", await call(worker, "GET", "/v1/usage"), 200);
});

baton.test("openapi routes: jobs (create, list, get, run, pause, resume, delete)", async (worker) => {
  await check(
    worker,
    "/v1/chat/completions",
    "post",
    await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "a session for jobs" }],
    }, { "x-session-id": "oar-jobs" }),
    200,
  );
  const job = await check(
    worker,
    "/v1/jobs",
    "post",
    await call(worker, "POST", "/v1/jobs", {
      session: "oar-jobs",
      prompt: "openapi digest",
      schedule: { every: 3600 },
    }),
    201,
  );
  await check(
    worker,
    "/v1/jobs",
    "get",
    await call(worker, "GET", "/v1/jobs?session=oar-jobs"),
    200,
  );
  await check(worker, "/v1/jobs/{id}", "get", await call(worker, "GET", `/v1/jobs/${job.id}`), 200);
  await check(
    worker,
    "/v1/jobs/{id}/pause",
    "post",
    await call(worker, "POST", `/v1/jobs/${job.id}/pause`),
    200,
  );
  await check(
    worker,
    "/v1/jobs/{id}/resume",
    "post",
    await call(worker, "POST", `/v1/jobs/${job.id}/resume`),
    200,
  );
  await check(
    worker,
    "/v1/jobs/{id}/run",
    "post",
    await call(worker, "POST", `/v1/jobs/${job.id}/run`),
    202,
  );
  await until(async () => {
    const got = await json(await call(worker, "GET", `/v1/jobs/${job.id}`));
    return got.last_runs?.some((r: Json) => r.status === "completed");
  }, "the job ran");
  await check(worker, "/v1/jobs/{id}", "get", await call(worker, "GET", `/v1/jobs/${job.id}`), 200);
  await check(
    worker,
    "/v1/jobs/{id}",
    "delete",
    await call(worker, "DELETE", `/v1/jobs/${job.id}`),
    200,
  );
});

baton.test(
  "openapi routes: memory (/v1/memory, /v1/users/{user}/memory) and user erasure",
  async (worker, fake) => {
    _scriptMemory(fake);
    for (const fact of ["likes tea", "lives in Oslo", "has a cat"]) {
      const res = await postJson(worker, "/v1/chat/completions", {
        model: "m",
        user: "oar-u1",
        messages: [{ role: "user", content: `remember: ${fact}` }],
      }, { "x-session-id": "oar-memory" });
      await check(worker, "/v1/chat/completions", "post", res, 200);
    }
    const memory = await check(
      worker,
      "/v1/memory",
      "get",
      await call(worker, "GET", "/v1/memory?user=oar-u1"),
      200,
    );
    assertEquals(memory.facts.length, 3);
    await check(
      worker,
      "/v1/memory/{n}",
      "delete",
      await call(worker, "DELETE", `/v1/memory/1?user=oar-u1&version=${memory.version}`),
      200,
    );
    const user = encodeURIComponent("api:default:oar-u1");
    const theirs = await check(
      worker,
      "/v1/users/{user}/memory",
      "get",
      await call(worker, "GET", `/v1/users/${user}/memory`),
      200,
    );
    await check(
      worker,
      "/v1/users/{user}/memory/{n}",
      "delete",
      await call(worker, "DELETE", `/v1/users/${user}/memory/1?version=${theirs.version}`),
      200,
    );
    await check(
      worker,
      "/v1/memory",
      "delete",
      await call(worker, "DELETE", "/v1/memory?user=oar-u1"),
      200,
    );
    await check(
      worker,
      "/v1/users/{user}",
      "delete",
      await call(worker, "DELETE", `/v1/users/${user}`),
      200,
    );
  },
);

baton.test(
  "openapi routes: every platform's webhook, the WhatsApp handshake, and access pairings",
  async (worker, _fake, platform) => {
    for (const driver of DRIVERS) {
      driver.vars(platform);
      const delivery = await driver.message({ chat: driver.newChat(), text: "openapi hello" });
      const res = await deliver((p, init) => worker.fetch(p, init), driver, delivery);
      await check(worker, driver.path, "post", res);
      assert(res.status < 300, `${driver.name} answered ${res.status}`);
    }
    const challenge = await worker.fetch(
      `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=8675309`,
    );
    assertEquals(await check(worker, "/webhooks/whatsapp", "get", challenge, 200), "8675309");

    // Telegram's sender is unknown under the pairing policy: a code to approve, then a user.
    const pairings = await check(
      worker,
      "/v1/access/pairings",
      "get",
      await call(worker, "GET", "/v1/access/pairings"),
      200,
    );
    const pending = pairings.data.find((p: Json) => p.platform === telegramDriver.name);
    assert(pending, JSON.stringify(pairings));
    await check(
      worker,
      "/v1/access/pairings/{code}/approve",
      "post",
      await call(worker, "POST", `/v1/access/pairings/${pending.code}/approve`),
      200,
    );
    await check(
      worker,
      "/v1/access/users",
      "get",
      await call(worker, "GET", "/v1/access/users"),
      200,
    );
    await check(
      worker,
      "/v1/access/users/{user}",
      "delete",
      await call(
        worker,
        "DELETE",
        `/v1/access/users/${encodeURIComponent(`telegram:${pending.user}`)}`,
      ),
      200,
    );
  },
);

baton.test("openapi routes: POST /mcp initialize answers a JSON-RPC result; a notification 202", async (worker) => {
  const mcp = (body: unknown) =>
    worker.fetch("/mcp", {
      method: "POST",
      headers: {
        ...auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(body),
    });
  const init = await check(
    worker,
    "/mcp",
    "post",
    await mcp({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "openapi-test", version: "1" },
      },
    }),
    200,
  );
  assertEquals(init.id, 1);
  await check(
    worker,
    "/mcp",
    "post",
    await mcp({ jsonrpc: "2.0", method: "notifications/initialized" }),
    202,
  );
});

baton.test("openapi routes: every operation /openapi.json names had a real answer validated", async (worker) => {
  const doc = await _document(worker);
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops as object).map((method) => `${method} ${path}`)
  );
  assertEquals(
    documented.filter((op) => !covered.has(op) && !(op in UNCALLED)),
    [],
    "never called",
  );
  assertEquals(
    Object.keys(UNCALLED).filter((op) => !documented.includes(op)),
    [],
    "stale exceptions",
  );
});

baton.done();

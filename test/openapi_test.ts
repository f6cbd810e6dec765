// GET /openapi.json: a valid OpenAPI 3.1 document naming every route, and real answers of the Worker that match its schemas; Deno + Miniflare.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, json, until } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { batonApp } from "../functions/routes.ts";
import { openApiDocument } from "../functions/openapi.ts";
import { openApiPath } from "../lib/api/openapi_builder.ts";
import { deploymentOf } from "../lib/deployment/mod.ts";

const baton = sharedBaton();
const auth = { authorization: `Bearer ${API_KEY}` };
const jsonBody = { ...auth, "content-type": "application/json" };

/** The schema the document gives `method path` answering `status` (JSON). */
function _schemaFor(doc: Json, path: string, method: string, status: number): Json {
  const answer = doc.paths[path]?.[method]?.responses?.[String(status)];
  assert(answer, `the document has no ${status} for ${method.toUpperCase()} ${path}`);
  const schema = answer.content?.["application/json"]?.schema;
  assert(schema, `${status} of ${method.toUpperCase()} ${path} has no JSON schema`);
  return schema;
}

/**
 * Checks a real answer against the document: its status is listed for the route, and its body
 * validates against that status's schema (references into the document's components resolved).
 */
async function _matches(doc: Json, path: string, method: string, res: Response): Promise<Json> {
  const body = await json(res);
  const schema = _schemaFor(doc, path, method, res.status);
  // The document's components under the root, so `#/components/schemas/Error` resolves.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile({ ...schema, components: doc.components });
  assert(
    validate(body),
    `${method.toUpperCase()} ${path} ${res.status}: ${JSON.stringify(validate.errors)} in ` +
      JSON.stringify(body),
  );
  return body;
}

Deno.test("openApiDocument() describes every route hono registers, and no other", async () => {
  const app = batonApp(deploymentOf());
  const registered = new Set(
    app.routes.filter((r) => r.method !== "ALL").map((r) =>
      `${r.method.toLowerCase()} ${openApiPath(r.path)}`
    ),
  );
  const doc = await openApiDocument() as Json;
  const described = new Set(
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((method) => `${method} ${path}`)
    ),
  );
  assertEquals([...registered].filter((r) => !described.has(r)), [], "routes not described");
  assertEquals([...described].filter((d) => !registered.has(d)), [], "described, not routed");
});

Deno.test("openApiDocument() gives each request body the JSON Schema of the zod schema its route validates", async () => {
  const doc = await openApiDocument() as Json;
  const runs = doc.paths["/v1/runs"].post.requestBody.content["application/json"].schema;
  assertEquals(runs.required, ["input"]);
  assertEquals(runs.properties.input.maxLength, 100_000);
  const jobs = doc.paths["/v1/jobs"].post.requestBody.content["application/json"].schema;
  assertEquals(jobs.additionalProperties, false);
  const chat = doc.paths["/v1/chat/completions"].post.requestBody.content["application/json"];
  assertEquals(chat.schema.properties.messages.minItems, 1);
  assert(chat.example.messages.length, "an example request");
});

baton.test("GET /openapi.json answers, without a key, a valid OpenAPI 3.1 document", async (worker) => {
  const res = await worker.fetch("/openapi.json");
  assertStrictEquals(res.status, 200);
  assertEquals(res.headers.get("content-type")?.split(";")[0], "application/json");
  const doc = await json(res);
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 4_000));
  assertEquals(validator.version, "3.1");
  assertEquals(Object.keys(doc.components.securitySchemes).sort(), ["adminKey", "apiKey"]);
});

/** POST a JSON body to `path` with the test key. */
function _post(worker: TestWorker, path: string, body: unknown): Promise<Response> {
  return worker.fetch(path, { method: "POST", headers: jsonBody, body: JSON.stringify(body) });
}

baton.test("real answers of the API validate against /openapi.json's schemas", async (worker) => {
  const doc = await json(await worker.fetch("/openapi.json"));

  const completion = await _post(worker, "/v1/chat/completions", {
    model: "test",
    messages: [{ role: "user", content: "openapi hello" }],
  });
  assertStrictEquals(completion.status, 200);
  await _matches(doc, "/v1/chat/completions", "post", completion);

  const response = await _post(worker, "/v1/responses", { input: "openapi responses" });
  assertStrictEquals(response.status, 200);
  const created = await _matches(doc, "/v1/responses", "post", response);
  const retrieved = await worker.fetch(`/v1/responses/${created.id}`, { headers: auth });
  await _matches(doc, "/v1/responses/{id}", "get", retrieved);

  const started = await _post(worker, "/v1/runs", { input: "openapi run", session: "openapi-a" });
  assertStrictEquals(started.status, 202);
  const run = await _matches(doc, "/v1/runs", "post", started);
  await until(async () => {
    const state = await json(await worker.fetch(`/v1/runs/${run.run_id}`, { headers: auth }));
    return state.status === "completed";
  }, "the run completed");
  const state = await worker.fetch(`/v1/runs/${run.run_id}`, { headers: auth });
  await _matches(doc, "/v1/runs/{id}", "get", state);

  const session = await worker.fetch(`/v1/sessions/${encodeURIComponent(run.session_key)}`, {
    headers: auth,
  });
  assertStrictEquals(session.status, 200);
  await _matches(doc, "/v1/sessions/{key}", "get", session);

  const usage = await worker.fetch("/v1/usage", { headers: auth });
  assertStrictEquals(usage.status, 200);
  await _matches(doc, "/v1/usage", "get", usage);

  const models = await worker.fetch("/v1/models", { headers: auth });
  await _matches(doc, "/v1/models", "get", models);
  const health = await worker.fetch("/healthz");
  await _matches(doc, "/healthz", "get", health);
});

baton.test("error answers (400, 401, 404) validate against /openapi.json's error schema", async (worker) => {
  const doc = await json(await worker.fetch("/openapi.json"));

  const invalid = await _post(worker, "/v1/chat/completions", { messages: [] });
  assertStrictEquals(invalid.status, 400);
  const error = await _matches(doc, "/v1/chat/completions", "post", invalid);
  assertEquals(error.error.type, "invalid_request_error");

  const noKey = await worker.fetch("/v1/runs", { method: "POST", body: "{}" });
  assertStrictEquals(noKey.status, 401);
  await _matches(doc, "/v1/runs", "post", noKey);

  const missing = await worker.fetch("/v1/runs/run_openapi-nope_1", { headers: auth });
  assertStrictEquals(missing.status, 404);
  await _matches(doc, "/v1/runs/{id}", "get", missing);

  const badRun = await _post(worker, "/v1/runs", { input: "" });
  assertStrictEquals(badRun.status, 400);
  await _matches(doc, "/v1/runs", "post", badRun);
});

baton.done();

// The generated client types of /openapi.json: committed up to date, every example of the document type-checks against them, and openapi-fetch typed with them talks to a running baton; Deno + Node (generator) + Miniflare.
import createClient from "openapi-fetch";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, until } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { openApiDocument } from "../functions/openapi.ts";
import type { paths } from "../lib/api/openapi_types.ts";
import { generateOpenApiTypes, OPENAPI_TYPES } from "../scripts/openapi_types.ts";
import { openApiExamples, openApiExamplesProgram } from "../scripts/openapi_examples.ts";

const baton = sharedBaton();

/**
 * `deno check`s the examples of `doc` against the committed types; on failure, the errors with
 * the examples they are about (the line comments of the program), so the message names them.
 */
async function _checkExamples(
  doc: Record<string, unknown>,
): Promise<{ ok: boolean; errors: string }> {
  const dir = await Deno.makeTempDir({ prefix: "baton-openapi-examples-" });
  try {
    const program = openApiExamplesProgram(doc, OPENAPI_TYPES.href);
    const file = `${dir}/examples.ts`;
    await Deno.writeTextFile(file, program);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", file],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    const lines = program.split("\n");
    const named = [...stderr.matchAll(/examples\.ts:(\d+):\d+/g)]
      .map((m) => lines[Number(m[1]) - 1]?.match(/^\/\* (.*?) \*\//)?.[1]);
    return { ok: out.success, errors: `${named.join("; ")}\n${stderr}` };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("generateOpenApiTypes() matches the committed lib/api/openapi_types.ts (else: npm run docs:openapi)", async () => {
  const committed = await Deno.readTextFile(OPENAPI_TYPES);
  const fresh = await generateOpenApiTypes();
  assert(
    committed === fresh,
    "lib/api/openapi_types.ts differs from what /openapi.json generates: run `npm run docs:openapi`",
  );
});

Deno.test("openApiExamplesProgram(): every example of /openapi.json type-checks against the generated types", async () => {
  const doc = await openApiDocument();
  const where = openApiExamples(doc).map((e) => e.where);
  // The check checks something: request and answer examples, and the shared error's.
  assert(where.includes("POST /v1/runs request application/json example"), where.join("\n"));
  assert(where.includes("POST /v1/chat/completions 200 application/json example"));
  assert(where.includes("components.Error examples"));
  const { ok, errors } = await _checkExamples(doc);
  assert(ok, errors);
});

Deno.test("openApiExamplesProgram(): an example that disagrees with its schema fails the check, named", async () => {
  const doc = structuredClone(await openApiDocument()) as Json;
  const runs = doc.paths["/v1/runs"].post.requestBody.content["application/json"];
  runs.example = { input: "Summarise my inbox", sesion: "typo" };
  const { ok, errors } = await _checkExamples(doc);
  assertEquals(ok, false, "a misspelt field in an example passed the check");
  assert(errors.startsWith("POST /v1/runs request application/json example"), errors);
  assert(errors.includes("sesion"), errors);
});

baton.test("openapi-fetch typed with the generated paths completes a chat and lists its session", async (worker) => {
  const client = createClient<paths>({
    baseUrl: worker.url,
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const completion = await client.POST("/v1/chat/completions", {
    body: { model: "test", messages: [{ role: "user", content: "typed client hello" }] },
    headers: { "x-session-id": "openapi-client-a" },
  });
  assertStrictEquals(completion.response.status, 200, JSON.stringify(completion.error));
  assertEquals(completion.data?.object, "chat.completion");
  assert(completion.data?.choices[0].message.content?.includes("typed client hello"));

  await until(async () => {
    const page = await client.GET("/v1/sessions", { params: { query: { platform: "api" } } });
    return page.data?.data.some((s) => s.key.includes("openapi-client-a")) ?? false;
  }, "the chat's session is listed");

  const missing = await client.GET("/v1/runs/{id}", { params: { path: { id: "run_nope_1" } } });
  assertStrictEquals(missing.response.status, 404);
  assertEquals(missing.error?.error.type, "not_found");
});

baton.done();

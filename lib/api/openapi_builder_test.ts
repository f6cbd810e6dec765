// Unit tests of the OpenAPI builder: hono paths, auth, the shared error answers, zod bodies; Deno.
import { assertEquals } from "@std/assert";
import * as z from "zod";
import { jsonSchemaOf, openApiPath, openApiPaths } from "./openapi_builder.ts";

// deno-lint-ignore no-explicit-any
type _Json = any;

Deno.test("openApiPath() turns hono's :params into OpenAPI's {params}", () => {
  assertEquals(
    openApiPath("/v1/sessions/:key/media/:scope/:hash"),
    "/v1/sessions/{key}/media/{scope}/{hash}",
  );
  assertEquals(openApiPath("/healthz"), "/healthz");
});

Deno.test("openApiPaths() adds path parameters, the key's security and the shared error answers", () => {
  const paths = openApiPaths([{
    method: "post",
    path: "/v1/runs/:id/steer",
    tag: "runs",
    summary: "Steer",
    auth: "tenant",
    requestBody: { body: z.object({ input: z.string().min(1) }) },
    responses: { 202: { description: "Given.", body: z.object({ ok: z.boolean() }) } },
    errors: [409],
  }]);
  const op = paths["/v1/runs/{id}/steer"].post as _Json;
  assertEquals(op.security, [{ apiKey: [] }]);
  assertEquals(op.parameters, [{
    name: "id",
    in: "path",
    required: true,
    schema: { type: "string" },
  }]);
  assertEquals(Object.keys(op.responses), ["202", "400", "401", "403", "409", "429"]);
  assertEquals(op.responses["409"].content["application/json"].schema, {
    $ref: "#/components/schemas/Error",
  });
  assertEquals(op.requestBody.content["application/json"].schema.required, ["input"]);
});

Deno.test("openApiPaths() leaves a route without auth open (security: [])", () => {
  const paths = openApiPaths([{
    method: "get",
    path: "/healthz",
    tag: "meta",
    summary: "Up",
    auth: "none",
    responses: { 200: { description: "Up." } },
  }]);
  assertEquals((paths["/healthz"].get as Record<string, unknown>).security, []);
  assertEquals(Object.keys((paths["/healthz"].get as _Json).responses), ["200"]);
});

Deno.test("jsonSchemaOf() gives a request's input side and drops what JSON Schema cannot say", () => {
  const schema = z.object({
    n: z.string().transform(Number),
    m: z.record(z.string(), z.string()).refine((v) => Object.keys(v).length < 3),
  });
  const input = jsonSchemaOf(schema, "input");
  assertEquals((input.properties as _Json).n, { type: "string" });
  assertEquals(input.$schema, undefined);
});

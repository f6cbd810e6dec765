// Unit tests for lib/runtime/json_depth.ts and the request schemas that use it (Chat Completions, Responses); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { jsonDepthError, MAX_SCHEMA_DEPTH } from "./json_depth.ts";
import { chatCompletionRequest, responseRequest } from "../openai/mod.ts";

/** `levels` levels of JSON objects, each holding the next under "a" (the innermost empty). */
function nested(levels: number): Record<string, unknown> {
  return JSON.parse('{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1));
}

/** The first issue of a failed parse as `path: message`, or null when it parsed. */
function firstIssue(result: { success: boolean; error?: unknown }): string | null {
  if (result.success) return null;
  const issue = (result.error as { issues: { path: PropertyKey[]; message: string }[] }).issues[0];
  return `${issue.path.join(".")}: ${issue.message}`;
}

Deno.test("jsonDepthError() counts containers: scalars 0, {} and [] 1, each level one more", () => {
  for (const scalar of [null, 1, "s", true]) assertStrictEquals(jsonDepthError(scalar, 0), null);
  assertStrictEquals(jsonDepthError({}, 1), null);
  assertEquals(jsonDepthError({}, 0), { message: "nesting deeper than 0 levels", path: [] });
  assertStrictEquals(jsonDepthError([[1], { a: [] }], 3), null);
  assertEquals(jsonDepthError([[1], { a: [] }], 2), {
    message: "nesting deeper than 2 levels",
    path: [1, "a"],
  });
  assertStrictEquals(jsonDepthError(nested(64), 64), null);
  assertEquals(jsonDepthError(nested(65), 64)?.path, Array(64).fill("a"));
});

Deno.test("jsonDepthError() finds the deep branch among shallow ones and names its path", () => {
  const value = { a: 1, b: [{}, { c: nested(10) }], d: "x" };
  assertStrictEquals(jsonDepthError(value, 13), null);
  assertEquals(jsonDepthError(value, 12)?.path.slice(0, 4), ["b", 1, "c", "a"]);
});

Deno.test("jsonDepthError() walks 500,000 levels (a 1 MB body) without overflowing the stack", () => {
  const deep = JSON.parse("[".repeat(500_000) + "]".repeat(500_000));
  assertEquals(jsonDepthError(deep, 128)?.path.length, 128);
});

Deno.test("chatCompletionRequest refuses tool parameters and a response schema nested past MAX_SCHEMA_DEPTH", () => {
  const messages = [{ role: "user", content: "hi" }];
  const tool = (parameters: unknown) => ({
    messages,
    tools: [{ type: "function", function: { name: "t", parameters } }],
  });
  const format = (schema: unknown) => ({
    messages,
    response_format: { type: "json_schema", json_schema: { name: "s", schema } },
  });
  assertStrictEquals(
    firstIssue(chatCompletionRequest.safeParse(tool(nested(MAX_SCHEMA_DEPTH)))),
    null,
  );
  assertStrictEquals(
    firstIssue(chatCompletionRequest.safeParse(tool(nested(MAX_SCHEMA_DEPTH + 1)))),
    "tools.0.function.parameters: nesting deeper than 64 levels",
  );
  assertStrictEquals(firstIssue(chatCompletionRequest.safeParse(format(nested(64)))), null);
  const deep = chatCompletionRequest.safeParse(format(nested(1_000)));
  assertStrictEquals(
    firstIssue(deep),
    "response_format.json_schema.schema: nesting deeper than 64 levels",
  );
});

Deno.test("responseRequest refuses tool parameters and text.format.schema nested past MAX_SCHEMA_DEPTH", () => {
  const tool = (parameters: unknown) => ({
    input: "hi",
    tools: [{ type: "function", name: "t", parameters }],
  });
  const format = (schema: unknown) => ({
    input: "hi",
    text: { format: { type: "json_schema", name: "s", schema } },
  });
  assertStrictEquals(firstIssue(responseRequest.safeParse(tool(nested(64)))), null);
  assertStrictEquals(
    firstIssue(responseRequest.safeParse(tool(nested(65)))),
    "tools.0.parameters: nesting deeper than 64 levels",
  );
  assertStrictEquals(firstIssue(responseRequest.safeParse(format(nested(64)))), null);
  assertStrictEquals(
    firstIssue(responseRequest.safeParse(format(nested(1_000)))),
    "text.format.schema: nesting deeper than 64 levels",
  );
  // A plain-text format, and none, still parse.
  assert(responseRequest.safeParse({ input: "hi", text: { format: { type: "text" } } }).success);
  assert(responseRequest.safeParse({ input: "hi", text: null }).success);
});

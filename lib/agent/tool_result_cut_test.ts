// Unit tests for cutting long tool results (tool_result_cut.ts, run_turn.ts) and telling a context overflow (context_overflow.ts); Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { scriptedModel, toolCall } from "../../test/_support/scripted_model.ts";
import { isContextOverflow } from "./context_overflow.ts";
import { runTurn } from "./run_turn.ts";
import { cutToolResult } from "./tool_result_cut.ts";
import { defineTool, ToolRegistry } from "./tools.ts";

Deno.test("cutToolResult() keeps a short result and cuts a long one with a note", () => {
  assertEquals(cutToolResult("abc", 3), "abc");
  assertEquals(cutToolResult("abc", undefined), "abc");
  const cut = cutToolResult("x".repeat(5_000), 1_000);
  assert(cut.startsWith("x".repeat(1_000) + "\n[tool result cut: 4000 of 5000 characters"));
  assertMatch(cut, /TOOL_RESULT_MAX_CHARS=1000/);
});

Deno.test("runTurn() cuts a tool result over toolResultMaxChars before the model and the transcript see it", async () => {
  const page = defineTool({
    name: "fetch_page",
    description: "a long page",
    parameters: { type: "object" },
    run: () => "p".repeat(50_000),
  });
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "fetch_page", {})] },
    { content: "read it" },
  ]);
  const result = await runTurn({
    system: [],
    history: [],
    maxSteps: 4,
    signal: new AbortController().signal,
    model,
    tools: new ToolRegistry([page]),
    input: "read",
    toolResultMaxChars: 2_000,
  });
  const kept = String(result.messages[2].content);
  assert(kept.length < 2_200, `kept ${kept.length} characters`);
  assertMatch(kept, /\[tool result cut: 48000 of 50000 characters/);
  assertEquals(model.requests[1].messages.at(-1)?.content, kept);
});

Deno.test("isContextOverflow() tells the providers' context errors from other client errors", () => {
  const openai = {
    code: "context_length_exceeded",
    message: "This model's maximum context length is 8192 tokens.",
  };
  assert(isContextOverflow(400, openai));
  assert(isContextOverflow(400, { message: "prompt is too long: 210000 tokens > 200000 maximum" }));
  assert(
    isContextOverflow(400, { message: "The input token count (1200000) exceeds the maximum" }),
  );
  assert(isContextOverflow(413, { message: "Request too large for model" }));
  assert(!isContextOverflow(400, { message: "invalid tool schema" }));
  assert(!isContextOverflow(500, openai), "a 5xx is the provider's trouble");
});

// Unit tests for lib/agent/token_ceiling.ts through runTurn and the real Chat Completions client against the fake model on loopback: each call's output bound clamped to what is left of TURN_MAX_TOKENS; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { startFakeModel } from "../testing/fake_model.ts";
import { openAIChatModel } from "./chat_model.ts";
import { runTurn, TOKEN_CAP_REPLY } from "./run_turn.ts";
import { sessionInfoTool, ToolRegistry } from "./tools.ts";
import { clampToCeiling } from "./token_ceiling.ts";

/** A turn of tool calls (300 prompt + 50 completion tokens each) under a ceiling of 1000. */
async function loopUnder(params?: Record<string, number>) {
  const fake = await startFakeModel();
  try {
    fake.script(() => ({
      kind: "tool_call",
      name: "session_info",
      args: {},
      usage: { prompt_tokens: 300, completion_tokens: 50 },
    }));
    const model = openAIChatModel({
      baseURL: fake.url,
      apiKey: "k",
      model: "m",
      maxRetries: 0,
      timeoutMs: 10_000,
    });
    const result = await runTurn({
      model,
      tools: new ToolRegistry([sessionInfoTool]),
      system: [],
      history: [],
      input: "loop",
      maxSteps: 8,
      maxTokens: 1000,
      signal: new AbortController().signal,
      ...(params ? { params } : {}),
    });
    return { result, bodies: fake.requests.map((r) => r.body) };
  } finally {
    await fake.close();
  }
}

Deno.test("runTurn() with maxTokens clamps each call's max_completion_tokens to what is left of the ceiling", async () => {
  const { result, bodies } = await loopUnder();
  // Nothing used before the first call; 350 used and a 300-token prompt ahead of the second
  // (1000 - 350 - 300 = 350 left for its output); after two, 700 + 300 leaves nothing: no third.
  assertEquals(bodies.map((b) => b.max_completion_tokens), [1000, 350]);
  assertEquals(bodies.map((b) => b.max_tokens), [undefined, undefined]);
  assertStrictEquals(result.reply, TOKEN_CAP_REPLY);
});

Deno.test("runTurn() with maxTokens keeps a caller's smaller bound, and clamps the field the caller used", async () => {
  const { bodies } = await loopUnder({ max_tokens: 400 });
  assertEquals(bodies.map((b) => b.max_tokens), [400, 350]);
  assertEquals(bodies.map((b) => b.max_completion_tokens), [undefined, undefined]);
});

Deno.test("clampToCeiling() leaves params alone without a ceiling, and says when nothing is left", () => {
  const used = { prompt_tokens: 600, completion_tokens: 100 };
  assertEquals(clampToCeiling(undefined, { temperature: 0 }, used, 300), { temperature: 0 });
  assertEquals(clampToCeiling(1000, undefined, used, 300), null);
  assertEquals(clampToCeiling(1001, undefined, used, 300), { max_completion_tokens: 1 });
  assertEquals(
    clampToCeiling(5000, { max_completion_tokens: 10, max_tokens: 20 }, used, 300),
    { max_completion_tokens: 10, max_tokens: 20 },
  );
});

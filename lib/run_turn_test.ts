// Unit tests for lib/run_turn.ts with a scripted in-process model; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { scriptedModel, toolCall } from "../test/_support/scripted_model.ts";
import { echoModel } from "./chat_model.ts";
import { runTurn, STEP_CAP_REPLY } from "./run_turn.ts";
import { bindTurn } from "./session_context.ts";
import { defineTool, sessionInfoTool, ToolRegistry } from "./tools.ts";

const base = {
  system: ["be brief"],
  history: [],
  maxSteps: 8,
  signal: new AbortController().signal,
};

Deno.test("runTurn() answers with text and returns the user and assistant messages", async () => {
  const result = await runTurn({
    ...base,
    model: echoModel(),
    tools: new ToolRegistry(),
    input: "hi",
  });
  assertStrictEquals(result.reply, "hi");
  assertEquals(result.messages, [{ role: "user", content: "hi" }, {
    role: "assistant",
    content: "hi",
  }]);
});

Deno.test("runTurn() runs tool calls and pairs every call with its result", async () => {
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "session_info", {}), toolCall("c2", "missing_tool", {})] },
    { content: "all done" },
  ]);
  const result = await bindTurn(
    { platform: "telegram", session_key: "telegram:1", chat_id: "1" },
    {},
    () =>
      runTurn({ ...base, model, tools: new ToolRegistry([sessionInfoTool]), input: "who am i" }),
  );
  assertStrictEquals(result.reply, "all done");
  assertEquals(result.messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "tool",
    "assistant",
  ]);
  const info = JSON.parse(String(result.messages[2].content));
  assertEquals(info.platform, "telegram");
  assertEquals(info.session_key, "telegram:1");
  assertStrictEquals(info.async_delivery, false);
  assertEquals(Object.keys(info).sort(), [
    "async_delivery",
    "chat_id",
    "message_id",
    "platform",
    "session_key",
    "thread_id",
    "user_id",
    "user_name",
  ]);
  assertEquals(JSON.parse(String(result.messages[3].content)), {
    error: "unknown tool: missing_tool",
  });
  assertEquals(model.requests[0].messages[0], { role: "system", content: "be brief" });
  assertEquals(model.requests[1].messages.length, 1 + 5 - 1);
});

Deno.test("runTurn() reports a throwing tool to the model instead of failing the turn", async () => {
  const boom = defineTool({
    name: "boom",
    description: "fails",
    parameters: { type: "object" },
    run() {
      throw new Error("kaput");
    },
  });
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "boom", {})] },
    { content: "recovered" },
  ]);
  const result = await runTurn({ ...base, model, tools: new ToolRegistry([boom]), input: "x" });
  assertEquals(JSON.parse(String(result.messages[2].content)), { error: "kaput" });
  assertStrictEquals(result.reply, "recovered");
});

Deno.test("runTurn() stops at maxSteps with the transcript still paired", async () => {
  const model = scriptedModel(
    Array.from({ length: 10 }, (_, i) => ({ toolCalls: [toolCall(`c${i}`, "session_info", {})] })),
  );
  const result = await runTurn({
    ...base,
    maxSteps: 3,
    model,
    tools: new ToolRegistry([sessionInfoTool]),
    input: "loop",
  });
  assertStrictEquals(model.requests.length, 3);
  assertStrictEquals(result.reply, STEP_CAP_REPLY);
  assertEquals(
    result.messages.map((m) => m.role),
    ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"],
  );
});

Deno.test("ToolRegistry.register() refuses duplicate and malformed names", () => {
  const registry = new ToolRegistry([sessionInfoTool]);
  let thrown = 0;
  for (const name of ["session_info", "has space", ""]) {
    try {
      registry.register({ ...sessionInfoTool, name });
    } catch {
      thrown++;
    }
  }
  assertStrictEquals(thrown, 3);
});

const _clientTool = {
  type: "function" as const,
  function: { name: "client_lookup", parameters: { type: "object" } },
};

Deno.test("runTurn() ends on a client tool call, running baton's own calls of that step first", async () => {
  const model = scriptedModel([
    { toolCalls: [toolCall("b1", "session_info", {}), toolCall("c1", "client_lookup", { q: 1 })] },
  ]);
  const result = await runTurn({
    ...base,
    model,
    tools: new ToolRegistry([sessionInfoTool]),
    clientTools: [_clientTool],
    input: "look it up",
  });
  assertEquals(result.toolCalls?.map((c) => c.id), ["c1"]);
  assertEquals(result.messages.map((m) => m.role), ["user", "assistant", "tool"]);
  assertEquals(model.requests.length, 1, "the model is not asked again before the client answers");
  assert(
    model.requests[0].tools.some((t) =>
      t.type === "function" && t.function.name === "client_lookup"
    ),
  );
});

Deno.test("runTurn() continues on the client's tool results, and answers calls a new question left open", async () => {
  const history = [
    { role: "user" as const, content: "look it up" },
    {
      role: "assistant" as const,
      content: null,
      tool_calls: [toolCall("c1", "client_lookup", {})],
    },
  ];
  const onResults = scriptedModel([{ content: "found it" }]);
  const continued = await runTurn({
    ...base,
    history,
    model: onResults,
    tools: new ToolRegistry(),
    clientTools: [_clientTool],
    toolResults: [{ role: "tool", tool_call_id: "c1", content: "42" }],
  });
  assertStrictEquals(continued.reply, "found it");
  assertEquals(continued.messages.map((m) => m.role), ["tool", "assistant"]);
  const onQuestion = scriptedModel([{ content: "ok" }]);
  const abandoned = await runTurn({
    ...base,
    history,
    model: onQuestion,
    tools: new ToolRegistry(),
    input: "never mind",
  });
  assertEquals(abandoned.messages.map((m) => m.role), ["tool", "user", "assistant"]);
  assertEquals(onQuestion.requests[0].messages.slice(-2).map((m) => m.role), ["tool", "user"]);
});

// Unit tests for lib/agent/run_turn.ts with a scripted in-process model; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { scriptedModel, toolCall } from "../../test/_support/scripted_model.ts";
import { type ChatModel, echoModel } from "./chat_model.ts";
import {
  type ModelEvent,
  REFUSED_ASK,
  runTurn,
  STEP_CAP_REPLY,
  TOKEN_CAP_REPLY,
} from "./run_turn.ts";
import { bindTurn } from "../runtime/mod.ts";
import { defineTool, sessionInfoTool, type Tool, toolAsks, ToolRegistry } from "./tools.ts";

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

Deno.test("runTurn() keeps inputMedia with the user message and sends each model call through view", async () => {
  const seen: unknown[][] = [];
  const model: ChatModel = {
    name: "seeing",
    complete: ({ messages }) => {
      seen.push(messages);
      return Promise.resolve({
        content: "seen",
        toolCalls: [],
        usage: { prompt_tokens: 0, completion_tokens: 0 },
      });
    },
  };
  const result = await runTurn({
    ...base,
    model,
    tools: new ToolRegistry(),
    input: "look",
    inputMedia: [{ id: "k/1", type: "image/gif", size: 1 }],
    view: (messages) =>
      Promise.resolve(
        messages.map((m) => m.role === "user" ? { role: "user", content: "viewed" } : m),
      ),
  });
  assertEquals(
    result.messages[0],
    {
      role: "user",
      content: "look",
      media: [{ id: "k/1", type: "image/gif", size: 1 }],
    } as unknown as (typeof result.messages)[number],
  );
  assertEquals(seen[0].at(-1), { role: "user", content: "viewed" });
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

Deno.test("runTurn() with maxTokens stops a long tool loop before the model call that would pass it, with a note", async () => {
  const usage = { prompt_tokens: 300, completion_tokens: 50 };
  const model = scriptedModel(
    Array.from({ length: 10 }, (_, i) => ({
      toolCalls: [toolCall(`c${i}`, "session_info", {})],
      usage,
    })),
  );
  const result = await runTurn({
    ...base,
    maxTokens: 800,
    model,
    tools: new ToolRegistry([sessionInfoTool]),
    input: "loop",
  });
  // 350 after one call, 700 after two; a third (at least 300 more prompt tokens) would pass 800.
  assertStrictEquals(model.requests.length, 2);
  assertStrictEquals(result.reply, TOKEN_CAP_REPLY);
  assertEquals(result.usage, { prompt_tokens: 600, completion_tokens: 100 });
  assertEquals(
    result.messages.map((m) => m.role),
    ["user", "assistant", "tool", "assistant", "tool", "assistant"],
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

/** A tool that counts its runs and asks before each, unless `approval` says otherwise. */
function countingTool(approval: Parameters<typeof defineTool>[0]["approval"] = "always") {
  const runs: unknown[] = [];
  const tool = defineTool<{ n?: number }>({
    name: "act",
    description: "acts",
    parameters: { type: "object" },
    approval,
    run(args) {
      runs.push(args);
      return "acted";
    },
  });
  return { runs, tool };
}

const asksByApproval = (tool: Tool, args: Record<string, unknown>) =>
  toolAsks(tool, args, new Set());

Deno.test("runTurn() pauses before running a step's tools when a call asks, and resumes there", async () => {
  const { runs, tool } = countingTool();
  const tools = new ToolRegistry([tool, sessionInfoTool]);
  const steps = [{
    toolCalls: [toolCall("c0", "session_info", {}), toolCall("c1", "act", { n: 1 })],
  }];
  const paused = await runTurn({
    ...base,
    model: scriptedModel(steps),
    tools,
    input: "go",
    asks: asksByApproval,
  });
  assertEquals(paused.paused, [{ call_id: "c1", tool: "act", arguments: '{"n":1}' }]);
  assertEquals(runs, [], "nothing of the step ran, not even the call that does not ask");
  assertEquals(paused.messages.map((m) => m.role), ["user", "assistant"]);

  const approved = await runTurn({
    ...base,
    model: scriptedModel([{ content: "finished" }]),
    tools,
    asks: asksByApproval,
    resume: { messages: paused.messages, step: paused.steps, usage: paused.usage, denied: {} },
  });
  assertEquals(runs, [{ n: 1 }], "the approved call ran once");
  assertStrictEquals(approved.reply, "finished");
  assertEquals(approved.messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "tool",
    "assistant",
  ]);
  assertEquals(approved.usage, { prompt_tokens: 2, completion_tokens: 2 });
  assertStrictEquals(approved.steps, 2);
});

Deno.test("runTurn() resumed with a denial tells the model and never runs the call", async () => {
  const { runs, tool } = countingTool();
  const tools = new ToolRegistry([tool]);
  const first = await runTurn({
    ...base,
    model: scriptedModel([{ toolCalls: [toolCall("c1", "act", {})] }]),
    tools,
    input: "go",
    asks: asksByApproval,
  });
  const model = scriptedModel([{ content: "ok, I won't" }]);
  const denied = await runTurn({
    ...base,
    model,
    tools,
    asks: asksByApproval,
    resume: { messages: first.messages, step: 1, usage: first.usage, denied: { c1: "no way" } },
  });
  assertEquals(runs, []);
  assertStrictEquals(denied.reply, "ok, I won't");
  const result = model.requests[0].messages.at(-1)!;
  assertEquals(result, { role: "tool", tool_call_id: "c1", content: '{"error":"no way"}' });
});

Deno.test("runTurn() asks by the tool's approval function, which sees the arguments and the bound context", async () => {
  const seen: unknown[] = [];
  const { runs, tool } = countingTool((args, context) => {
    seen.push([args, context.user_id]);
    return (args as { n?: number }).n === 2;
  });
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "act", { n: 1 })] },
    { toolCalls: [toolCall("c2", "act", { n: 2 })] },
  ]);
  const result = await bindTurn(
    { user_id: "alice" },
    {},
    () =>
      runTurn({
        ...base,
        model,
        tools: new ToolRegistry([tool]),
        input: "go",
        asks: asksByApproval,
      }),
  );
  assertEquals(runs, [{ n: 1 }]);
  assertEquals(result.paused?.map((c) => c.call_id), ["c2"]);
  assertEquals(seen, [[{ n: 1 }, "alice"], [{ n: 2 }, "alice"]]);
});

Deno.test("runTurn() with onAsk refuse tells the model and never runs the asking call", async () => {
  const { runs, tool } = countingTool();
  const model = scriptedModel([{ toolCalls: [toolCall("c1", "act", {})] }, { content: "fine" }]);
  const result = await runTurn({
    ...base,
    model,
    tools: new ToolRegistry([tool]),
    input: "go",
    asks: (t, args) => toolAsks(t, args, new Set()),
    onAsk: "refuse",
  });
  assertEquals(runs, []);
  assertStrictEquals(result.paused, undefined);
  assertEquals(model.requests[1].messages.at(-1)!.content, JSON.stringify({ error: REFUSED_ASK }));
});

Deno.test("toolAsks() asks for a tool listed in APPROVAL_TOOLS even without its own approval", () => {
  assert(toolAsks(sessionInfoTool, {}, new Set(["session_info"])));
  assert(!toolAsks(sessionInfoTool, {}, new Set(["other"])));
});

Deno.test("runTurn() tells onModel each model call's end: step, duration, tokens and tool calls, or the error", async () => {
  const events: ModelEvent[] = [];
  const model = scriptedModel([{ toolCalls: [toolCall("c1", "session_info", {})] }, {
    content: "done",
  }]);
  await runTurn({
    ...base,
    model,
    tools: new ToolRegistry([sessionInfoTool]),
    input: "hi",
    onModel: (event) => events.push(event),
  });
  assertEquals(events.map((e) => [e.type, e.step]), [["model.completed", 1], [
    "model.completed",
    2,
  ]]);
  assertEquals(events.map((e) => e.type === "model.completed" && e.tool_calls), [1, 0]);
  assert(events.every((e) => e.duration_ms >= 0));
  const failing = {
    complete: () => Promise.reject(new Error("503 upstream unavailable")),
  } as unknown as ChatModel;
  const failed: ModelEvent[] = [];
  const turn = runTurn({
    ...base,
    model: failing,
    tools: new ToolRegistry(),
    input: "hi",
    onModel: (event) => failed.push(event),
  });
  await turn.then(() => assert(false, "the turn must fail"), () => {});
  assertEquals(failed.map((e) => [e.type, e.step, "error" in e && e.error]), [
    ["model.failed", 1, "Error: 503 upstream unavailable"],
  ]);
});

Deno.test("runTurn() gives each tool the turn's context in its run options, as currentContext() reads it", async () => {
  const seen: unknown[] = [];
  const probe = defineTool({
    name: "probe",
    description: "reads its options",
    parameters: { type: "object" },
    run(_args, options) {
      seen.push(options.context);
      return "ok";
    },
  });
  const model = scriptedModel([{ toolCalls: [toolCall("c1", "probe", {})] }, { content: "done" }]);
  await bindTurn(
    { platform: "telegram", session_key: "telegram:5", chat_id: "5", thread_id: "" },
    { thread_id: "fallback", user_name: "someone" },
    () => runTurn({ ...base, model, tools: new ToolRegistry([probe]), input: "go" }),
  );
  assertEquals(seen, [{
    platform: "telegram",
    chat_id: "5",
    chat_name: "",
    thread_id: "",
    user_id: "",
    user_name: "someone",
    session_key: "telegram:5",
    message_id: "",
    job_id: "",
    async_delivery: false,
  }]);
});

// Unit tests for lib/agent/delegate_task.ts with a scripted in-process model; Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals, assertThrows } from "@std/assert";
import { scriptedModel, toolCall } from "../../test/_support/scripted_model.ts";
import { type ChatModel, ModelError, type ModelRequest } from "./chat_model.ts";
import { createDelegateTaskTool } from "./delegate_task.ts";
import { runTurn } from "./run_turn.ts";
import { asyncDeliverySupported, bindTurn, currentContext } from "../runtime/mod.ts";
import { sessionInfoTool, ToolRegistry } from "./tools.ts";

const NOTE =
  "Background execution is unavailable on this channel (nothing can be delivered after this turn ends); the task ran synchronously and its result is below.";

const signal = new AbortController().signal;
const turnFields = { platform: "telegram", session_key: "telegram:1", chat_id: "1" };

function delegate(model: ChatModel, extra: { now?: () => number } = {}) {
  return createDelegateTaskTool({
    model,
    tools: new ToolRegistry([sessionInfoTool]),
    system: "you are a sub-agent",
    maxSteps: 4,
    ...extra,
  });
}

function keysDeep(value: unknown): string[] {
  if (!value || typeof value !== "object") return [];
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysDeep(v)]);
}

Deno.test("delegate_task background:true in a bound turn runs inline and adds the note", async () => {
  let clock = 1000;
  const child = scriptedModel([() => {
    clock += 40.4;
    return { content: "the summary" };
  }]);
  const tool = delegate(child, { now: () => clock });
  const result = await bindTurn(turnFields, {}, () => {
    assertStrictEquals(asyncDeliverySupported(), false);
    return tool.run({ goal: "find x", background: true }, { signal, context: currentContext() });
  });
  assertEquals(result, {
    results: [{ task_index: 0, status: "completed", summary: "the summary", duration_ms: 40 }],
    total_duration_ms: 40,
    note: NOTE,
  });
  const json = JSON.stringify(result);
  assert(!/dispatch/i.test(json), json);
  const idKeys = keysDeep(result).filter((k) => /(^|_)(id|handle)$|^(job|poll)/i.test(k));
  assertEquals(idKeys, []);
});

Deno.test("delegate_task without background:true adds no note", async () => {
  for (const args of [{ goal: "g" }, { goal: "g", background: false }]) {
    const result = await bindTurn(
      turnFields,
      {},
      () =>
        delegate(scriptedModel([{ content: "ok" }])).run(args, {
          signal,
          context: currentContext(),
        }),
    ) as Record<string, unknown>;
    assertEquals(Object.keys(result).sort(), ["results", "total_duration_ms"]);
  }
});

Deno.test("delegate_task background:true outside a bound turn runs inline without the note", async () => {
  assertStrictEquals(asyncDeliverySupported(), true);
  const result = await delegate(scriptedModel([{ content: "ok" }])).run(
    { goal: "g", background: true },
    { signal, context: currentContext() },
  ) as Record<string, unknown>;
  assertEquals(Object.keys(result).sort(), ["results", "total_duration_ms"]);
  assertStrictEquals((result.results as { summary: string }[])[0].summary, "ok");
});

Deno.test("delegate_task gives the child a fresh conversation and no delegate_task", async () => {
  const model = scriptedModel([
    { toolCalls: [toolCall("d1", "delegate_task", { goal: "sum it", context: "a=1, b=2" })] },
    { content: "3" },
    { content: "the child said 3" },
  ]);
  const tools = new ToolRegistry([
    sessionInfoTool,
    createDelegateTaskTool({
      model,
      tools: new ToolRegistry([sessionInfoTool]),
      system: "you are a sub-agent",
      maxSteps: 4,
    }),
  ]);
  const result = await bindTurn(turnFields, {}, () =>
    runTurn({
      model,
      tools,
      system: ["parent prompt"],
      history: [{ role: "user", content: "earlier" }, { role: "assistant", content: "before" }],
      input: "add a and b",
      maxSteps: 4,
      signal,
    }));
  assertStrictEquals(model.requests.length, 3);
  assertEquals(model.requests[1].messages, [
    { role: "system", content: "you are a sub-agent" },
    { role: "user", content: "sum it\n\nContext:\na=1, b=2" },
  ]);
  const names = (r: ModelRequest) =>
    r.tools.map((t) => t.type === "function" ? t.function.name : t.type);
  assertEquals(names(model.requests[0]), ["session_info", "delegate_task"]);
  assertEquals(names(model.requests[1]), ["session_info"]);
  assertStrictEquals(result.reply, "the child said 3");
});

Deno.test("delegate_task refuses a child registry that contains delegate_task", () => {
  const inner = delegate(scriptedModel([]));
  const error = assertThrows(() =>
    createDelegateTaskTool({
      model: scriptedModel([]),
      tools: new ToolRegistry([sessionInfoTool, inner]),
      system: "s",
      maxSteps: 4,
    })
  );
  assert(error instanceof TypeError);
});

Deno.test("delegate_task result reaches the parent as the tool message paired by call id", async () => {
  const parent = scriptedModel([
    { toolCalls: [toolCall("call_7", "delegate_task", { goal: "look it up" })] },
    { content: "final" },
  ]);
  const child = scriptedModel([{ content: "found it" }]);
  const result = await bindTurn(turnFields, {}, () =>
    runTurn({
      model: parent,
      tools: new ToolRegistry([delegate(child)]),
      system: [],
      history: [],
      input: "go",
      maxSteps: 4,
      signal,
    }));
  assertEquals(result.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
  const message = result.messages[2];
  assert(message.role === "tool");
  assertStrictEquals(message.tool_call_id, "call_7");
  const content = JSON.parse(String(message.content));
  assertStrictEquals(content.results[0].status, "completed");
  assertStrictEquals(content.results[0].summary, "found it");
  assertStrictEquals(content.note, undefined);
  assertEquals(child.requests[0].messages[1], { role: "user", content: "look it up" });
});

Deno.test("delegate_task reports a failing child as status failed", async () => {
  const child = scriptedModel([() => {
    throw new ModelError("the model provider answered 503", 503);
  }]);
  const result = await delegate(child).run({ goal: "g" }, {
    signal,
    context: currentContext(),
  }) as {
    results: { status: string; summary: string; duration_ms: number }[];
    total_duration_ms: number;
  };
  assertStrictEquals(result.results[0].status, "failed");
  assertStrictEquals(result.results[0].summary, "the model provider answered 503");
  assert(Number.isInteger(result.results[0].duration_ms));
  assert(Number.isInteger(result.total_duration_ms));
});

Deno.test("delegate_task rethrows when the turn is aborted", async () => {
  const controller = new AbortController();
  const reason = new Error("stopped");
  const child = scriptedModel([() => {
    controller.abort(reason);
    throw reason;
  }]);
  const thrown = await assertRejects(() =>
    delegate(child).run({ goal: "g" }, {
      signal: controller.signal,
      context: currentContext(),
    }) as Promise<
      unknown
    >
  );
  assertStrictEquals(thrown, reason);
});

Deno.test("delegate_task invalid args reach the parent as {error}", async () => {
  const bad = [{}, { goal: "" }, { goal: "  " }, { goal: 5 }, { goal: "g", context: 3 }, {
    goal: "g",
    background: "yes",
  }];
  const parent = scriptedModel([
    { toolCalls: bad.map((args, i) => toolCall(`c${i}`, "delegate_task", args)) },
    { content: "gave up" },
  ]);
  const child = scriptedModel([]);
  const result = await runTurn({
    model: parent,
    tools: new ToolRegistry([delegate(child)]),
    system: [],
    history: [],
    input: "go",
    maxSteps: 4,
    signal,
  });
  const errors = result.messages.filter((m) => m.role === "tool").map((m) =>
    JSON.parse(String(m.content))
  );
  assertEquals(errors, [
    { error: 'delegate_task: "goal" must be a non-empty string' },
    { error: 'delegate_task: "goal" must be a non-empty string' },
    { error: 'delegate_task: "goal" must be a non-empty string' },
    { error: 'delegate_task: "goal" must be a non-empty string' },
    { error: 'delegate_task: "context" must be a string when given' },
    { error: 'delegate_task: "background" must be a boolean when given' },
  ]);
  assertStrictEquals(child.requests.length, 0);
});

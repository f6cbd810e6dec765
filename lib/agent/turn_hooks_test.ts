// Unit tests for lib/agent/turn_hooks.ts (the time-boxed hook caller) and the toolCall hook in runTurn; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { scriptedModel, toolCall } from "../../test/_support/scripted_model.ts";
import { bindTurn, setLogSink, withLogFields } from "../runtime/mod.ts";
import { runTurn } from "./run_turn.ts";
import { defineTool, ToolRegistry } from "./tools.ts";
import { callHook, dropsMessage, type ToolCallEvent, type TurnHooks } from "./turn_hooks.ts";

const base = {
  system: [],
  history: [],
  maxSteps: 4,
  signal: new AbortController().signal,
};

/** A tool that counts its runs. */
function counted() {
  const runs: unknown[] = [];
  const tool = defineTool({
    name: "count",
    description: "counts",
    parameters: { type: "object" },
    run(args) {
      runs.push(args);
      return "counted";
    },
  });
  return { tool, runs };
}

/** Log lines written while `fn` runs. */
async function logged<T>(fn: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const lines: string[] = [];
  const restore = setLogSink((_level, line) => lines.push(line));
  try {
    return { result: await fn(), lines };
  } finally {
    restore();
  }
}

Deno.test("callHook() answers the hook's verdict, and undefined without the hook", async () => {
  const hooks: TurnHooks = { messageReceived: () => ({ drop: true }) };
  const event = {
    platform: "x",
    chat_id: "",
    user_id: "",
    session_key: "",
    seq: 0,
    source: "x",
    text: "",
  };
  assertEquals(await callHook({ hooks }, "messageReceived", event), { drop: true });
  assertStrictEquals(await callHook({}, "messageReceived", event), undefined);
});

Deno.test("callHook() swallows a throwing hook and logs it by name, without the event", async () => {
  const hooks: TurnHooks = {
    turnStart: () => {
      throw new Error("hook broke");
    },
  };
  const event = {
    platform: "x",
    chat_id: "",
    user_id: "",
    session_key: "",
    seq: 1,
    text: "secret words",
  };
  const { result, lines } = await logged(() => callHook({ hooks }, "turnStart", event));
  assertStrictEquals(result, undefined);
  assertEquals(lines.length, 1);
  assert(lines[0].includes("hook failed") && lines[0].includes("turnStart"));
  assert(lines[0].includes("hook broke"));
  assert(!lines[0].includes("secret words"));
});

Deno.test("callHook() gives up on a hanging hook after its time box", async () => {
  const hooks: TurnHooks = { toolCall: () => new Promise(() => {}) };
  const event = {
    platform: "x",
    chat_id: "",
    user_id: "",
    session_key: "",
    seq: 1,
    tool: "t",
    call_id: "c",
    arguments: {},
  };
  const { result, lines } = await logged(() =>
    callHook({ hooks, hookTimeoutMs: 10 }, "toolCall", event)
  );
  assertStrictEquals(result, undefined);
  assert(lines[0].includes("hook timed out"));
});

Deno.test("dropsMessage() drops on false and { drop: true } only", () => {
  assertEquals([false, { drop: true }, true, undefined, {}, { drop: false }].map(dropsMessage), [
    true,
    true,
    false,
    false,
    false,
    false,
  ]);
});

Deno.test("runTurn() tells toolCall each baton call, with the turn's context, before it runs", async () => {
  const { tool, runs } = counted();
  const seen: ToolCallEvent[] = [];
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "count", { n: 1 })] },
    { content: "done" },
  ]);
  const result = await bindTurn(
    { platform: "telegram", session_key: "telegram:9", chat_id: "9", user_id: "u9" },
    {},
    () =>
      withLogFields({ seq: 4 }, () =>
        runTurn({
          ...base,
          model,
          tools: new ToolRegistry([tool]),
          input: "go",
          hooks: {
            toolCall: (event) => {
              assertEquals(runs.length, 0); // before it runs
              seen.push(event);
            },
          },
        })),
  );
  assertStrictEquals(result.reply, "done");
  assertEquals(runs.length, 1);
  assertEquals(seen.length, 1);
  assertEquals(seen[0].tool, "count");
  assertEquals(seen[0].call_id, "c1");
  assertEquals(seen[0].arguments, { n: 1 });
  assertEquals(seen[0].session_key, "telegram:9");
  assertEquals(seen[0].user_id, "u9");
  assertEquals(seen[0].seq, 4);
});

Deno.test("runTurn() refuses a call toolCall denies: the model sees the reason, the tool never runs", async () => {
  const { tool, runs } = counted();
  const model = scriptedModel([
    { toolCalls: [toolCall("c1", "count", {})] },
    { content: "ok, not counting" },
  ]);
  const result = await runTurn({
    ...base,
    model,
    tools: new ToolRegistry([tool]),
    input: "go",
    hooks: { toolCall: () => ({ deny: "counting is off today" }) },
  });
  assertEquals(runs.length, 0);
  assertEquals(JSON.parse(String(result.messages[2].content)), {
    error: "refused by the deployment: counting is off today",
  });
  assertStrictEquals(result.reply, "ok, not counting");
});

Deno.test("runTurn() runs the call when toolCall throws or hangs, and the turn is answered", async () => {
  for (
    const toolCallHook of [
      () => {
        throw new Error("hook down");
      },
      () => new Promise<void>(() => {}),
    ]
  ) {
    const { tool, runs } = counted();
    const model = scriptedModel([
      { toolCalls: [toolCall("c1", "count", {})] },
      { content: "answered" },
    ]);
    const { result } = await logged(() =>
      runTurn({
        ...base,
        model,
        tools: new ToolRegistry([tool]),
        input: "go",
        hooks: { toolCall: toolCallHook },
        hookTimeoutMs: 20,
      })
    );
    assertEquals(runs.length, 1);
    assertStrictEquals(result.reply, "answered");
  }
});

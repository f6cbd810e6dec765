// Unit tests for steering a running turn (lib/session/steers.ts through SessionSentinel and runTurn) over node:sqlite; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { ChatMessage, ChatModel, ModelReply, ModelRequest } from "../agent/mod.ts";
import { defineTool, runTurn, type Tool, toolAsks, ToolRegistry } from "../agent/mod.ts";
import { parseCommand } from "../chat/mod.ts";
import { type InboundMessage, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { msg, options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { STEER_MARK, steerArgument } from "./steers.ts";

/** A gate a test opens: `wait()` resolves once `open()` was called (before or after). */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reached = false;
  return {
    open,
    reached: () => reached,
    wait: () => {
      reached = true;
      return opened;
    },
  };
}

/** Waits until `condition` holds, a turn of the event loop at a time. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A model answering call `i` with `script[i]` (awaited: a step may wait on a gate); "done" after. */
function asyncModel(script: ((request: ModelRequest) => Promise<Partial<ModelReply>>)[]) {
  const requests: ChatMessage[][] = [];
  const model: ChatModel = {
    name: "steer-test",
    async complete(request) {
      requests.push(structuredClone(request.messages));
      const step = script.shift();
      const reply = step ? await step(request) : { content: "done" };
      return {
        content: reply.content ?? "",
        toolCalls: reply.toolCalls ?? [],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      };
    },
  };
  return { model, requests };
}

/** A tool call of `wait`. */
const callWait = {
  id: "w1",
  type: "function" as const,
  function: { name: "wait", arguments: "{}" },
};

/** The `wait` tool: its run waits on `released`. */
function waitTool(released: ReturnType<typeof gate>): Tool {
  return {
    name: "wait",
    description: "waits",
    parameters: { type: "object", properties: {} },
    run: async () => {
      await released.wait();
      return "waited";
    },
  };
}

/** An executor that runs the real agent loop over `model` and `tools`, with the session's steers. */
function loopExecutor(model: ChatModel, tools: Tool[]): TurnExecutor {
  return (message, history, signal, progress) =>
    runTurn({
      model,
      tools: new ToolRegistry(tools),
      system: [],
      history,
      input: message.text,
      maxSteps: 5,
      signal,
      progress,
      ...(progress.steers ? { steers: progress.steers } : {}),
    });
}

/** A chat message whose command is parsed as the access gate parses it. */
const chat = (text: string): InboundMessage => ({ ...msg(text), command: parseCommand(text) });

/** The user messages of a model request, by content. */
const userTexts = (messages: ChatMessage[]) =>
  messages.filter((m) => m.role === "user").map((m) => m.content);

Deno.test("SessionSentinel with busyMode steer gives a message sent during a tool call to the next model call, and it gets no turn of its own", async () => {
  const released = gate();
  const { model, requests } = asyncModel([
    () => Promise.resolve({ toolCalls: [callWait] }),
    (request) => {
      const last = request.messages.at(-1);
      return Promise.resolve({ content: `saw: ${last?.content}` });
    },
  ]);
  const sentinel = new SessionSentinel(
    sqliteStorage(),
    loopExecutor(model, [waitTool(released)]),
    { ...options, busyMode: "steer" },
  );
  const first = sentinel.submit(msg("first"));
  const drained = sentinel.drain();
  await until(released.reached, "the tool call");
  const steer = sentinel.submit(msg("also this"));
  // A caller waiting from the start (the generic webhook, an API completion) gets the turn's outcome.
  const waited = sentinel.outcome(steer.seq);
  released.open();
  await drained;

  assertEquals(requests.length, 2, "one turn: two model calls");
  assertEquals(userTexts(requests[1]), ["first", `${STEER_MARK}also this`]);
  assertStrictEquals(requests[1].at(-1)?.role, "user", "after the tool's result");
  const outcome = await sentinel.outcome(first.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, `saw: ${STEER_MARK}also this`);
  assertEquals(await sentinel.outcome(steer.seq), outcome, "the steer is answered by that turn");
  assertEquals(await waited, outcome, "and so is its caller, waiting since before it was taken");
  assertEquals(sentinel.runState(steer.seq)?.status, "completed");
  assertEquals(sentinel.snapshot().queued, 0);
  assertEquals(
    sentinel.snapshot().messages.filter((m) => m.role === "user").map((m) => m.content),
    ["first", `${STEER_MARK}also this`],
    "the transcript keeps the steer once, marked",
  );
});

Deno.test("SessionSentinel queues a /steer (queue mode) that comes after the turn's last step, and answers it as its own turn", async () => {
  const answering = gate();
  const { model, requests } = asyncModel([
    async () => {
      await answering.wait();
      return { content: "answer one" };
    },
    (request) => Promise.resolve({ content: `own turn: ${request.messages.at(-1)?.content}` }),
  ]);
  const sentinel = new SessionSentinel(sqliteStorage(), loopExecutor(model, []), options);
  const first = sentinel.submit(chat("first"));
  const drained = sentinel.drain();
  await until(answering.reached, "the last model call");
  const steer = sentinel.submit(chat("/steer Also THIS"));
  assertEquals(steer.notice, undefined, "a steer is no command answered at once");
  answering.open();
  await drained;

  assertEquals(requests.length, 2);
  assertEquals(userTexts(requests[0]), ["first"]);
  assertEquals(userTexts(requests[1]).at(-1), "Also THIS", "its own turn, unmarked, case kept");
  const own = await sentinel.outcome(steer.seq);
  assertEquals(own.status === "completed" && own.reply, "own turn: Also THIS");
  const one = await sentinel.outcome(first.seq);
  assertEquals(one.status === "completed" && one.reply, "answer one");
});

Deno.test("SessionSentinel never gives a steer that came too late for its turn to the next queued turn: it runs in its own turn, in order", async () => {
  const answering = gate();
  const { model, requests } = asyncModel([
    async () => {
      await answering.wait();
      return { content: "answer a" };
    },
  ]);
  const sentinel = new SessionSentinel(sqliteStorage(), loopExecutor(model, []), options);
  sentinel.submit(chat("a"));
  const drained = sentinel.drain();
  await until(answering.reached, "a's last model call");
  sentinel.submit(chat("b"));
  sentinel.submit(chat("/steer for a"));
  answering.open();
  await drained;
  assertEquals(requests.map((r) => userTexts(r).at(-1)), ["a", "b", "for a"]);
  assertEquals(requests.map((r) => userTexts(r).length), [1, 2, 3], "b's turn took nothing");
});

Deno.test("SessionSentinel re-runs a turn that died right after taking a steer with it, once", async () => {
  const storage = sqliteStorage();
  const released = gate();
  const late = gate(); // the dead executor's model call, answered only once the test is over
  const dying = asyncModel([
    () => Promise.resolve({ toolCalls: [callWait] }),
    async () => {
      await late.wait();
      return { content: "the dead executor's late answer" };
    },
  ]);
  const before = new SessionSentinel(
    storage,
    loopExecutor(dying.model, [waitTool(released)]),
    options,
  );
  const first = before.submit(chat("first"));
  const abandoned = before.drain();
  await until(released.reached, "the tool call");
  const steer = before.submit(chat("/steer and this"));
  released.open();
  await until(() => dying.requests.length === 2, "the model call after the steer was taken");
  assertEquals(userTexts(dying.requests[1]), ["first", `${STEER_MARK}and this`]);

  // A new instance on the same storage is what a restart looks like; the old executor is dead.
  const rerun = asyncModel([
    (request) => Promise.resolve({ content: `users: ${userTexts(request.messages).length}` }),
  ]);
  const after = new SessionSentinel(storage, loopExecutor(rerun.model, []), options);
  await after.drain();

  assertEquals(rerun.requests.length, 1, "the steer got no turn of its own");
  assertEquals(userTexts(rerun.requests[0]), ["first", `${STEER_MARK}and this`]);
  const outcome = await after.outcome(first.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "users: 2");
  assertEquals(await after.outcome(steer.seq), outcome);
  assertEquals(
    after.snapshot().messages.filter((m) => m.role === "user").length,
    2,
    "the transcript has the steer once",
  );
  late.open();
  await abandoned;
  assertEquals(after.snapshot().messages.at(-1)?.content, "users: 2", "the late end wrote nothing");
});

Deno.test("SessionSentinel.steerRun() steers a queued run at its first step, and says `ended` for a finished one", async () => {
  const holding = gate();
  const { model, requests } = asyncModel([
    async () => {
      await holding.wait();
      return { content: "blocker done" };
    },
    (request) => Promise.resolve({ content: `target saw ${userTexts(request.messages).length}` }),
  ]);
  const sentinel = new SessionSentinel(sqliteStorage(), loopExecutor(model, []), options);
  const blocker = sentinel.submit(msg("blocker"));
  const drained = sentinel.drain();
  await until(holding.reached, "the blocker's model call");
  const target = sentinel.submit(msg("target"));
  const steered = sentinel.steerRun(target.seq, msg("mind this"));
  assert(typeof steered === "object" && !steered.refused);
  holding.open();
  await drained;

  assertEquals(requests.length, 2, "the steer had no turn of its own");
  assertEquals(userTexts(requests[1]).slice(-2), ["target", `${STEER_MARK}mind this`]);
  assertEquals(sentinel.steerRun(blocker.seq, msg("too late")), "ended");
  assertEquals(sentinel.steerRun(9_999, msg("nobody")), "not_found");
});

/**
 * An executor whose model calls the asking tool `act` on a user message, then answers with the
 * user texts it was sent; `acted` counts the tool's runs. Approvals and steers as the deployment's.
 */
function askingLoop() {
  const acted = { runs: 0 };
  const act = defineTool({
    name: "act",
    description: "acts",
    parameters: { type: "object" },
    approval: "always",
    run() {
      acted.runs++;
      return "acted";
    },
  });
  const { model, requests } = asyncModel([
    () =>
      Promise.resolve({
        toolCalls: [{ id: "a1", type: "function", function: { name: "act", arguments: "{}" } }],
      }),
    (request) => Promise.resolve({ content: `saw: ${userTexts(request.messages).join(" | ")}` }),
  ]);
  const execute: TurnExecutor = (message, history, signal, progress, approvals) =>
    runTurn({
      model,
      tools: new ToolRegistry([act]),
      system: [],
      history,
      input: message.text,
      maxSteps: 5,
      signal,
      progress,
      asks: (tool, args) => !approvals?.granted.has(tool.name) && toolAsks(tool, args, new Set()),
      ...(approvals?.resume ? { resume: approvals.resume } : {}),
      ...(progress.steers ? { steers: progress.steers } : {}),
    });
  return { execute, requests, acted };
}

Deno.test("SessionSentinel leaves a steer sent while its turn waits for approval queued (no turn of its own), and gives it to the turn's next model call once it resumes, across a restart", async () => {
  const storage = sqliteStorage();
  const loop = askingLoop();
  const paused: SessionSentinel = new SessionSentinel(storage, loop.execute, {
    ...options,
    busyMode: "steer",
    startDrain: () => void paused.drain(),
  });
  const first = paused.submit(chat("go"));
  await until(
    () => paused.runState(first.seq)?.status === "waiting_for_approval",
    "the turn to pause",
  );
  const steer = paused.submit(chat("mind the cost"));
  await paused.drain();
  // Nobody is working: the steer is neither taken by the waiting turn nor run as a turn.
  assertEquals(paused.runState(steer.seq)?.status, "queued");
  assertEquals(loop.requests.length, 1, "no model call while the turn waits");
  assertEquals(paused.snapshot().queued, 1);

  // A restart during the pause, then the answer: the resumed turn reads the steer at its next step.
  const after: SessionSentinel = new SessionSentinel(storage, loop.execute, {
    ...options,
    busyMode: "steer",
    startDrain: () => void after.drain(),
  });
  assertEquals(after.submit(chat("/approve")).notice, "Approved: act runs now.");
  const outcome = await after.outcome(first.seq);
  assertEquals(loop.acted.runs, 1);
  assertEquals(loop.requests.length, 2, "one turn: the call that asked and the one after");
  assertEquals(loop.requests[1].at(-2)?.role, "tool", "after the approved call's result");
  assertEquals(loop.requests[1].at(-1)?.content, `${STEER_MARK}mind the cost`);
  assertEquals(
    outcome.status === "completed" && outcome.reply,
    `saw: go | ${STEER_MARK}mind the cost`,
  );
  assertEquals(await after.outcome(steer.seq), outcome, "the steer is answered by that turn");
  assertEquals(after.runState(steer.seq)?.status, "completed");
  assertEquals(after.snapshot().queued, 0);
  assertEquals(
    after.snapshot().messages.filter((m) => m.role === "user").map((m) => m.content),
    ["go", `${STEER_MARK}mind the cost`],
    "the transcript keeps the steer once",
  );
});

/** Storage that counts the statements taking steers (`UPDATE inbox SET status = 'steered'`). */
function steerCountedStorage(): ReturnType<typeof sqliteStorage> & { takes: () => number } {
  const storage = sqliteStorage();
  let takes = 0;
  const exec = storage.sql.exec;
  storage.sql.exec = (query, ...bindings) => {
    if (/SET status = 'steered'/.test(query)) takes++;
    return exec(query, ...bindings);
  };
  return Object.assign(storage, { takes: () => takes });
}

Deno.test("takeSteers() runs no statement at a turn's steps while nothing was offered to it, and still takes one offered while the model thinks", async () => {
  const storage = steerCountedStorage();
  const thinking = gate();
  const { model, requests } = asyncModel([
    () =>
      Promise.resolve({
        toolCalls: [{ ...callWait, function: { name: "noop", arguments: "{}" } }],
      }),
    () =>
      Promise.resolve({
        toolCalls: [{ ...callWait, function: { name: "noop", arguments: "{}" } }],
      }),
    () => Promise.resolve({ content: "one" }),
    () =>
      Promise.resolve({
        toolCalls: [{ ...callWait, function: { name: "noop", arguments: "{}" } }],
      }),
    async () => {
      await thinking.wait();
      return { toolCalls: [{ ...callWait, function: { name: "noop", arguments: "{}" } }] };
    },
    (request) => Promise.resolve({ content: `saw: ${request.messages.at(-1)?.content}` }),
  ]);
  const noop: Tool = {
    name: "noop",
    description: "does nothing",
    parameters: { type: "object", properties: {} },
    run: () => Promise.resolve("ok"),
  };
  const sentinel = new SessionSentinel(storage, loopExecutor(model, [noop]), {
    ...options,
    busyMode: "steer",
  });
  sentinel.submit(msg("first"));
  await sentinel.drain();
  assertEquals(requests.length, 3);
  // The first step of a new instance reads what a predecessor may have stored; then nothing.
  assertEquals(storage.takes(), 1, "three steps, one statement (the instance's first look)");

  const second = sentinel.submit(msg("second"));
  const drained = sentinel.drain();
  await until(thinking.reached, "the second turn's model thinking");
  sentinel.submit(msg("while thinking"));
  thinking.open();
  await drained;
  const outcome = await sentinel.outcome(second.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, `saw: ${STEER_MARK}while thinking`);
  assertEquals(requests.length, 6, "the steer got no turn of its own");
});

Deno.test("takeSteers() in a restarted object (new storage over the same database) takes a steer its predecessor stored", async () => {
  const storage = sqliteStorage();
  const released = gate();
  const dying = asyncModel([() => Promise.resolve({ toolCalls: [callWait] })]);
  const before = new SessionSentinel(storage, loopExecutor(dying.model, [waitTool(released)]), {
    ...options,
    busyMode: "steer",
  });
  const first = before.submit(msg("first"));
  void before.drain();
  await until(released.reached, "the tool call");
  before.submit(msg("stored before the restart"));

  const rerun = asyncModel([
    (request) => Promise.resolve({ content: `last: ${request.messages.at(-1)?.content}` }),
  ]);
  const after = new SessionSentinel(sqliteStorage(storage.db), loopExecutor(rerun.model, []), {
    ...options,
    busyMode: "steer",
  });
  await after.drain();
  const outcome = await after.outcome(first.seq);
  assertEquals(
    outcome.status === "completed" && outcome.reply,
    `last: ${STEER_MARK}stored before the restart`,
  );
  assertEquals(rerun.requests.length, 1, "the steer got no turn of its own");
});

Deno.test("steerArgument() keeps the text after /steer as typed, and is empty for a bare /steer", () => {
  assertEquals(steerArgument("/steer Use PYTHON\nplease"), "Use PYTHON\nplease");
  assertEquals(steerArgument("/steer@my_bot  go"), "go");
  assertEquals(steerArgument("/steer"), "");
  assertEquals(steerArgument("/steering wheel"), "");
});

// Unit tests of approvals in the session core (lib/session/approval_gate.ts, approvals.ts) over node:sqlite; Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { type ChatModel, defineTool, runTurn, toolAsks, ToolRegistry } from "../agent/mod.ts";
import { bindTurn, currentContext, type Transport } from "../runtime/mod.ts";
import { type InboundMessage, type RunEvent, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { parseCommand } from "../chat/mod.ts";

/**
 * An executor whose model calls the asking tool `act` for every message except those starting
 * with "plain", then answers "done: <tool result>"; `runs` records the context of each tool run.
 * `dies` makes this executor hang for good (its object dies there): in the tool, or in the model
 * call after it.
 */
function askingExecutor(dies?: "in_tool" | "after_tool") {
  // The text streams (as run events, for a message that records them) before the model answers.
  const never = new Promise<never>(() => {});
  const runs: { user: string; message: string }[] = [];
  const act = defineTool({
    name: "act",
    description: "acts",
    parameters: { type: "object" },
    approval: "always",
    run() {
      const ctx = currentContext();
      runs.push({ user: ctx.user_id, message: ctx.message_id });
      return dies === "in_tool" ? never : "acted";
    },
  });
  let calls = 0;
  const model: ChatModel = {
    name: "fake",
    complete({ messages, onDelta }) {
      const last = messages.at(-1)!;
      const usage = { prompt_tokens: 1, completion_tokens: 1 };
      if (last.role === "tool") {
        onDelta?.("done: ");
        if (dies === "after_tool") return never;
        onDelta?.(String(last.content));
        return Promise.resolve({ content: `done: ${last.content}`, toolCalls: [], usage });
      }
      if (last.role === "user" && String(last.content).startsWith("plain")) {
        return Promise.resolve({ content: `re: ${last.content}`, toolCalls: [], usage });
      }
      const id = `call${++calls}`;
      const toolCalls = [{
        id,
        type: "function" as const,
        function: { name: "act", arguments: "{}" },
      }];
      return Promise.resolve({ content: "", toolCalls, usage });
    },
  };
  const tools = new ToolRegistry([act]);
  const execute: TurnExecutor = (message, history, signal, progress, approvals) =>
    bindTurn(message.context, {}, () =>
      runTurn({
        model,
        tools,
        system: [],
        history,
        input: message.text,
        maxSteps: 8,
        signal,
        progress,
        onDelta: (delta) => progress.emit?.("message.delta", { delta }),
        asks: (tool, args) => !approvals?.granted.has(tool.name) && toolAsks(tool, args, new Set()),
        ...(approvals?.resume ? { resume: approvals.resume } : {}),
      }));
  return { runs, execute };
}

/** A chat message of session test:1 from `user`, commands on. */
const chatMsg = (text: string, user = "alice", id = text): InboundMessage => ({
  text,
  command: parseCommand(text),
  context: { session_key: "test:1", platform: "telegram", user_id: user, message_id: id },
});

/** Lets the drains a submit started run until the session has nothing left to do now. */
const settle = () => new Promise((r) => setTimeout(r, 20));

function sentinelWith(
  storage = sqliteStorage(),
  extra: Partial<typeof options> = {},
  dies?: "in_tool" | "after_tool",
) {
  const exec = askingExecutor(dies);
  const sentinel: SessionSentinel = new SessionSentinel(storage, exec.execute, {
    ...options,
    ...extra,
    startDrain: () => void sentinel.drain(),
  });
  return { sentinel, runs: exec.runs, storage };
}

Deno.test("SessionSentinel pauses a turn whose tool asks, holds the session, and runs the tool once on /approve", async () => {
  const { sentinel, runs } = sentinelWith();
  const first = sentinel.submit(chatMsg("go"));
  await settle();
  assertEquals(runs, [], "the asking call did not run");
  assertEquals(sentinel.runState(first.seq)?.status, "waiting_for_approval");
  assertStrictEquals(sentinel.snapshot().running, true);
  assertMatch(sentinel.submit(chatMsg("/status")).notice!, /^Waiting \d+ s for approval of act/);

  const later = sentinel.submit(chatMsg("plain later"));
  assertStrictEquals(sentinel.snapshot().queued, 1, "a new message queues behind the question");
  assertMatch(sentinel.submit(chatMsg("/approve", "bob")).notice!, /^Not yours/);
  await settle();
  assertEquals(runs, [], "another user's answer changes nothing");

  assertEquals(sentinel.submit(chatMsg("/approve")).notice, "Approved: act runs now.");
  assertEquals(sentinel.submit(chatMsg("/approve")).notice, "Nothing is waiting for approval.");
  const outcome = await sentinel.outcome(first.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "done: acted");
  await sentinel.outcome(later.seq);
  assertEquals(runs, [{ user: "alice", message: "go" }], "once, in its own turn's context");
  assertEquals(sentinel.snapshot().messages.map((m) => m.content), [
    "go",
    "",
    "acted",
    "done: acted",
    "plain later",
    "re: plain later",
  ]);
});

Deno.test("SessionSentinel keeps a paused turn across a restart: the watchdog leaves it, the answer resumes it once", async () => {
  let now = 1_000_000;
  const before = sentinelWith(sqliteStorage(), { now: () => now });
  const first = before.sentinel.submit(chatMsg("go"));
  await settle();
  assertEquals(before.sentinel.runState(first.seq)?.status, "waiting_for_approval");

  // A new instance on the same storage is a restarted object; its alarm is the watchdog's.
  const after = sentinelWith(before.storage, { now: () => now });
  now += options.leaseMs * 10;
  await after.sentinel.alarm();
  assertEquals(after.sentinel.runState(first.seq)?.status, "waiting_for_approval");
  assertEquals([...before.runs, ...after.runs], [], "not rerun as a dead executor's turn");

  assertEquals(after.sentinel.submit(chatMsg("/approve")).notice, "Approved: act runs now.");
  const outcome = await after.sentinel.outcome(first.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "done: acted");
  await after.sentinel.alarm();
  assertEquals(after.runs.length + before.runs.length, 1);
  assertStrictEquals(after.sentinel.snapshot().running, false);
});

Deno.test("SessionSentinel denies a question nobody answers by its deadline, and the model is told", async () => {
  let now = 1_000_000;
  const { sentinel, runs } = sentinelWith(sqliteStorage(), {
    now: () => now,
    approvalTimeoutMs: { chat: 5_000, api: 5_000 },
  });
  const first = sentinel.submit(chatMsg("go"));
  await settle();
  now += 4_000;
  await sentinel.alarm();
  assertEquals(sentinel.runState(first.seq)?.status, "waiting_for_approval", "not yet");
  now += 2_000;
  await sentinel.alarm();
  const outcome = await sentinel.outcome(first.seq);
  assertEquals(runs, []);
  assertMatch(
    outcome.status === "completed" ? outcome.reply : "",
    /did not approve this call in time/,
  );
  assertStrictEquals(sentinel.snapshot().running, false);
});

Deno.test("SessionSentinel /stop while a question waits denies it, ends the turn and frees the session", async () => {
  const { sentinel, runs } = sentinelWith();
  const first = sentinel.submit(chatMsg("go"));
  await settle();
  const queued = sentinel.submit(chatMsg("plain dropped"));
  assertEquals(
    sentinel.submit(chatMsg("/stop")).notice,
    "Stopped. The session is unlocked. Dropped 1 waiting message.",
  );
  assertEquals((await sentinel.outcome(first.seq)).status, "failed");
  assertEquals((await sentinel.outcome(queued.seq)).status, "failed");
  assertStrictEquals(sentinel.snapshot().running, false);
  assertEquals(sentinel.answerApproval(first.seq, "once", "api"), "not_pending");
  await settle();
  assertEquals(runs, []);
  const next = sentinel.submit(chatMsg("plain next"));
  const outcome = await sentinel.outcome(next.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "re: plain next");
});

Deno.test("SessionSentinel takes a bare no as a denial while a question is pending", async () => {
  const { sentinel, runs } = sentinelWith();
  const first = sentinel.submit(chatMsg("go"));
  await settle();
  assertEquals(sentinel.submit(chatMsg("No")).notice, "Denied: act will not run.");
  const outcome = await sentinel.outcome(first.seq);
  assertMatch(outcome.status === "completed" ? outcome.reply : "", /the user denied this call/);
  assertEquals(runs, []);
  assertEquals(sentinel.snapshot().messages.map((m) => m.content).includes("No"), false);
});

Deno.test("SessionSentinel.answerApproval() answers only the waiting run, once", async () => {
  const { sentinel, runs } = sentinelWith();
  const first = sentinel.submit({ ...chatMsg("go"), command: undefined, events: true });
  await settle();
  assertEquals(sentinel.answerApproval(first.seq + 99, "once", "api"), "not_found");
  const other = sentinel.submit(chatMsg("plain other"));
  assertEquals(sentinel.answerApproval(other.seq, "once", "api"), "not_pending");
  assertEquals(sentinel.answerApproval(first.seq, "once", "api"), "answered");
  assertEquals(sentinel.answerApproval(first.seq, "deny", "api"), "not_pending");
  await sentinel.outcome(other.seq);
  assertEquals(runs.length, 1);
  const events: string[] = [];
  sentinel.subscribe(first.seq, {
    write: (e) => (events.push(e.type), true),
    close: () => {},
  });
  assertEquals(events.filter((t) => t.startsWith("approval") || t.startsWith("run.")), [
    "run.queued",
    "run.started",
    "approval.request",
    "approval.responded",
    "run.completed",
  ]);
});

Deno.test("SessionSentinel remembers /approve session until /new, /approve always after it, until /forget approvals", async () => {
  const { sentinel, runs } = sentinelWith();
  const ask = async (text: string) => {
    const receipt = sentinel.submit(chatMsg(text));
    await settle();
    return sentinel.runState(receipt.seq)?.status;
  };
  assertEquals(await ask("one"), "waiting_for_approval");
  sentinel.submit(chatMsg("/approve session"));
  await settle();
  assertEquals(await ask("two"), "completed", "no question again in this conversation");
  assertMatch(sentinel.submit(chatMsg("/status")).notice!, /act \(this conversation\)/);
  sentinel.submit(chatMsg("/new"));
  assertEquals(await ask("three"), "waiting_for_approval", "a new conversation asks again");
  sentinel.submit(chatMsg("/approve always"));
  await settle();
  sentinel.submit(chatMsg("/new"));
  assertEquals(await ask("four"), "completed", "always: not even after /new");
  assertEquals(
    sentinel.submit(chatMsg("/forget approvals")).notice,
    "Forgot 2 approvals: those tools ask again.",
  );
  assertEquals(await ask("five"), "waiting_for_approval");
  assertEquals(runs.length, 4);
});

Deno.test("SessionSentinel arms its alarm when an answer is stored, so a restart right after resumes the turn", async () => {
  let now = 1_000_000;
  const alarms: number[] = [];
  const storage = sqliteStorage();
  const before = sentinelWith(storage, { now: () => now });
  const first = before.sentinel.submit(chatMsg("go"));
  await settle();
  const watched = { ...storage, setAlarm: (t: number) => (alarms.push(t), Promise.resolve()) };
  // The answer lands in an instance whose drain never runs: it dies right after the answer.
  const dying = new SessionSentinel(watched, askingExecutor().execute, {
    ...options,
    now: () => now,
    startDrain: () => {}, // the drain it would start dies with it
  });
  dying.answerApproval(first.seq, "once", "api");
  assertEquals(alarms, [now + options.leaseMs], "the watchdog, not the 24 h deadline");
  now += options.leaseMs;
  const after = sentinelWith(storage, { now: () => now });
  await after.sentinel.alarm();
  assertEquals(after.runs.length, 1);
  assertEquals((await after.sentinel.outcome(first.seq)).status, "completed");
});

Deno.test("SessionSentinel resumes a turn that died after its approved call ran without running it again", async () => {
  let now = 1_000_000;
  const before = sentinelWith(sqliteStorage(), { now: () => now }, "after_tool");
  const first = before.sentinel.submit(chatMsg("go"));
  await settle();
  assertEquals(before.sentinel.submit(chatMsg("/approve")).notice, "Approved: act runs now.");
  await settle();
  assertEquals(before.runs.length, 1, "ran, then its executor died in the next model call");

  now += options.leaseMs * 10;
  const after = sentinelWith(before.storage, { now: () => now });
  await after.sentinel.alarm();
  const outcome = await after.sentinel.outcome(first.seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "done: acted");
  assertEquals(after.runs, [], "its stored result stands");
  assertEquals(after.sentinel.snapshot().messages.map((m) => m.content), [
    "go",
    "",
    "acted",
    "done: acted",
  ]);
});

Deno.test("SessionSentinel resumes a run that died mid-text after its approval: its events spell the reply once", async () => {
  let now = 1_000_000;
  const before = sentinelWith(sqliteStorage(), { now: () => now }, "after_tool");
  const run = before.sentinel.submit({ ...chatMsg("go"), command: undefined, events: true });
  await settle();
  before.sentinel.answerApproval(run.seq, "once", "api");
  await settle();
  now += options.leaseMs * 10;
  const after = sentinelWith(before.storage, { now: () => now });
  await after.sentinel.alarm();
  const outcome = await after.sentinel.outcome(run.seq);
  const events: RunEvent[] = [];
  const transport: Transport<RunEvent> = {
    write: (e) => (events.push(e), true),
    close: () => {},
  };
  after.sentinel.subscribe(run.seq, transport);
  const text = events.filter((e) => e.type === "message.delta").map((e) => e.data.delta).join("");
  assertEquals(text, outcome.status === "completed" ? outcome.reply : "?");
});

Deno.test("SessionSentinel resumes a turn that died inside its approved call: the model is told, the call not run twice", async () => {
  let now = 1_000_000;
  const before = sentinelWith(sqliteStorage(), { now: () => now }, "in_tool");
  const first = before.sentinel.submit(chatMsg("go"));
  await settle();
  before.sentinel.submit(chatMsg("/approve"));
  await settle();
  assertEquals(before.runs.length, 1);

  now += options.leaseMs * 10;
  const after = sentinelWith(before.storage, { now: () => now });
  await after.sentinel.alarm();
  const outcome = await after.sentinel.outcome(first.seq);
  assertMatch(outcome.status === "completed" ? outcome.reply : "", /^done: .*cut off by a restart/);
  assertEquals(after.runs, [], "at most once: it may have run");
});

Deno.test("SessionSentinel.outcome(seq, true) resolves null when the turn pauses, and at once while it waits; without it, the outcome", async () => {
  const { sentinel } = sentinelWith();
  const first = sentinel.submit(chatMsg("go"));
  const early = sentinel.outcome(first.seq, true); // asked before the turn has even started
  const full = sentinel.outcome(first.seq);
  assertStrictEquals(await early, null);
  assertStrictEquals(await sentinel.outcome(first.seq, true), null, "a retry asking again");
  sentinel.submit(chatMsg("/approve"));
  const outcome = await full;
  assertEquals(outcome.status === "completed" && outcome.reply, "done: acted");
  assertEquals(await sentinel.outcome(first.seq, true), outcome, "after the end, the outcome");
  const plain = sentinel.submit(chatMsg("plain one"));
  const done = await sentinel.outcome(plain.seq, true);
  assertEquals(done?.status === "completed" && done.reply, "re: plain one", "never paused");
});

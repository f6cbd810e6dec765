// Unit tests for lib/session/session_inspector.ts: the inspector's read of a session over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { inspectedTimeline, inspectSession } from "./session_inspector.ts";

Deno.test("inspectSession() of storage with no session is null and creates no table", () => {
  const storage = sqliteStorage();
  assertEquals(inspectSession(storage), null);
  assertEquals(storage.db.prepare(`SELECT count(*) AS n FROM sqlite_master`).get()?.n, 0);
});

Deno.test("inspectSession() shows inbox rows, sent reply parts, run events with times, the last context", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  let now = 1_000;
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
    now: () => now += 10,
  });
  const chat = { ...msg("hello"), reply: { platform: "telegram", chat_id: 7 } };
  const first = sentinel.submit(chat);
  await sentinel.drain();
  await sentinel.outcome(first.seq);
  const run = sentinel.submit({ ...msg("via api"), events: true });
  await sentinel.drain();
  await sentinel.outcome(run.seq);
  assertEquals(sent, ["re: hello"]);

  const seen = inspectSession(storage)!;
  assertEquals(seen.claim.seq, null);
  assertEquals(seen.inbox.map((m) => [m.seq, m.status, m.text]), [
    [run.seq, "done", "via api"],
    [first.seq, "done", "hello"],
  ]);
  assertEquals(seen.inbox[1].duration_ms! > 0, true);
  assertEquals(seen.parts.map((p) => [p.seq, p.kind, p.status, p.text, p.platform]), [
    [first.seq, "reply", "sent", "re: hello", "telegram"],
  ]);
  // Every turn's timeline: the chat turn's too (its send, and a small final row).
  assertEquals(seen.runs.map((r) => r.seq), [run.seq, first.seq]);
  const types = seen.runs[0].events.map((e) => e.type);
  assertEquals(types, ["run.queued", "run.started", "run.completed"]);
  const chatTypes = seen.runs[1].events.map((e) => e.type);
  assertEquals(chatTypes, ["run.started", "reply.sent", "run.completed"]);
  assertEquals(seen.runs[1].events[2].data, { usage: { prompt_tokens: 0, completion_tokens: 0 } });
  const completed = seen.runs[0].events[2];
  assertEquals(completed.duration_ms! > 0 && completed.at !== null, true);
  assertEquals(seen.last_turn, { seq: run.seq, context: { session_key: "test:1" }, reply: null });
});

Deno.test("inspectedTimeline() times each tool call from its start, and the run from run.started", () => {
  const events = inspectedTimeline([
    { type: "run.queued", data: {}, at: 100 },
    { type: "run.started", data: {}, at: 110 },
    { type: "tool.started", data: { call_id: "a" }, at: 120 },
    { type: "tool.completed", data: { call_id: "a" }, at: 150 },
    { type: "run.cancelled", data: {}, at: 200 },
    { type: "message.delta", data: {}, at: null },
  ]);
  assertEquals(events.map((e) => [e.elapsed_ms, e.duration_ms]), [
    [0, null],
    [10, null],
    [20, null],
    [50, 30],
    [100, 90],
    [null, null],
  ]);
});

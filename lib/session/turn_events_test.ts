// Unit tests for the session's turn hooks and outbound events (turn_events.ts, event_outbox.ts, event_sender.ts) over node:sqlite; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { TurnEndEvent, TurnHooks, TurnStartEvent } from "../agent/mod.ts";
import type { SendResult } from "../chat/mod.ts";
import { setLogSink } from "../runtime/mod.ts";
import {
  type EventSink,
  type InboundMessage,
  SessionSentinel,
  type StoredEvent,
  type TurnExecutor,
} from "./mod.ts";
import { options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** A message of session `events:1` from user u1 in chat c1. */
const message = (text: string, extra: Partial<InboundMessage["context"]> = {}): InboundMessage => ({
  text,
  context: { session_key: "events:1", platform: "api", chat_id: "c1", user_id: "u1", ...extra },
});

/** An executor that answers with usage 3/4, or fails for a text starting with "fail". */
const answering: TurnExecutor = (m) => {
  if (m.text.startsWith("fail")) return Promise.reject(new Error("model down"));
  return Promise.resolve({
    reply: `re: ${m.text}`,
    messages: [{ role: "user", content: m.text }, { role: "assistant", content: `re: ${m.text}` }],
    usage: { prompt_tokens: 3, completion_tokens: 4 },
  });
};

/** A sink that records each post and answers from `answers` in turn (then 200). */
function recordingSink(answers: SendResult[] = []) {
  const posts: {
    webhookId: string;
    body: { type: string; timestamp: string; data: Record<string, unknown> };
  }[] = [];
  const sink: EventSink = {
    post(event: StoredEvent) {
      posts.push({ webhookId: event.webhookId, body: JSON.parse(event.body) });
      return Promise.resolve(answers.shift() ?? { ok: true });
    },
  };
  return { sink, posts };
}

/** Waits until `done` holds, checking every few ms; fails after 10 s (a condition never met). */
async function until(done: () => boolean): Promise<void> {
  for (let tries = 0; !done(); tries++) {
    if (tries > 5_000) throw new Error("condition never met");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Runs `fn` with log lines kept out of the test's output. */
async function quiet<T>(fn: () => Promise<T>): Promise<T> {
  const restore = setLogSink(() => {});
  try {
    return await fn();
  } finally {
    restore();
  }
}

Deno.test("SessionSentinel hooks: turnStart sees the turn starting, turnEnd its outcome and usage", async () => {
  const starts: TurnStartEvent[] = [];
  const ends: TurnEndEvent[] = [];
  const hooks: TurnHooks = {
    turnStart: (event) => void starts.push(event),
    turnEnd: (event) => void ends.push(event),
  };
  const sentinel = new SessionSentinel(sqliteStorage(), answering, { ...options, hooks });
  const ok = sentinel.submit(message("hello"));
  await sentinel.drain();
  const failed = sentinel.submit(message("fail now"));
  await sentinel.drain();
  await until(() => ends.length === 2);
  assertEquals(starts.map((s) => [s.seq, s.text, s.session_key, s.user_id, s.platform]), [
    [ok.seq, "hello", "events:1", "u1", "api"],
    [failed.seq, "fail now", "events:1", "u1", "api"],
  ]);
  assertEquals(ends[0].seq, ok.seq);
  assertEquals(ends[0].outcome, { status: "completed", reply: "re: hello" });
  assertEquals(ends[0].usage, { prompt_tokens: 3, completion_tokens: 4 });
  assertEquals(ends[1].outcome.status, "failed");
  assertEquals(ends[1].usage, { prompt_tokens: 0, completion_tokens: 0 });
});

Deno.test("SessionSentinel hooks: a throwing turnStart and a hanging one, or turnEnd, leave the turn answered", async () => {
  const never = () => new Promise<void>(() => {});
  const cases: TurnHooks[] = [
    {
      turnStart: () => {
        throw new Error("start hook broke");
      },
      turnEnd: () => Promise.reject(new Error("end hook broke")),
    },
    { turnStart: never, turnEnd: never },
  ];
  for (const hooks of cases) {
    const sentinel = new SessionSentinel(sqliteStorage(), answering, {
      ...options,
      hooks,
      hookTimeoutMs: 20,
    });
    const { seq } = sentinel.submit(message("still there?"));
    await quiet(() => sentinel.drain());
    assertEquals(await sentinel.outcome(seq), {
      status: "completed",
      reply: "re: still there?",
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    });
    assertStrictEquals(sentinel.snapshot().running, false);
  }
});

Deno.test("SessionSentinel events: one turn.completed or turn.failed per turn, naming its session and run", async () => {
  const { sink, posts } = recordingSink();
  const sentinel = new SessionSentinel(sqliteStorage(), answering, { ...options, events: sink });
  const ok = sentinel.submit(message("hello"));
  const failed = sentinel.submit(message("fail"));
  await sentinel.drain();
  await until(() => posts.length === 2);
  assertEquals(posts.map((p) => p.body.type), ["turn.completed", "turn.failed"]);
  assertEquals(posts[0].body.data, {
    session_key: "events:1",
    seq: ok.seq,
    platform: "api",
    chat_id: "c1",
    user_id: "u1",
    status: "completed",
    usage: { prompt_tokens: 3, completion_tokens: 4 },
  });
  assertEquals(posts[1].body.data.seq, failed.seq);
  assertEquals(posts[1].body.data.status, "failed");
  assertEquals((posts[1].body.data.error as { type: string }).type, "turn_error");
  assert(!Number.isNaN(Date.parse(posts[0].body.timestamp)));
  assert(posts[0].webhookId.startsWith("msg_") && posts[0].webhookId !== posts[1].webhookId);
  // A message cancelled while queued was no turn: no event.
  const held = recordingExecutor();
  const hold = held.hold("first");
  const other = recordingSink();
  const busy = new SessionSentinel(sqliteStorage(), held.execute, {
    ...options,
    events: other.sink,
  });
  busy.submit(message("first"));
  const queued = busy.submit(message("second"));
  const draining = busy.drain();
  await until(() => held.state.running === 1);
  busy.cancelRun(queued.seq);
  hold.resolve();
  await draining;
  await until(() => other.posts.length === 1);
  assertEquals(other.posts.map((p) => p.body.type), ["turn.completed"]);
});

Deno.test("SessionSentinel events: a 503 is retried with the same webhook-id, and a 400 is given up", async () => {
  const unavailable = { ok: false as const, status: 503, retryable: true, message: "503" };
  const { sink, posts } = recordingSink([unavailable]);
  const sentinel = new SessionSentinel(sqliteStorage(), answering, { ...options, events: sink });
  sentinel.submit(message("hello"));
  await quiet(async () => {
    await sentinel.drain();
    await until(() => posts.length === 2);
  });
  assertStrictEquals(posts[0].webhookId, posts[1].webhookId);
  assertEquals(posts[0].body, posts[1].body);

  const refused = { ok: false as const, status: 400, retryable: false, message: "400" };
  const second = recordingSink([refused]);
  const storage = sqliteStorage();
  const other = new SessionSentinel(storage, answering, { ...options, events: second.sink });
  other.submit(message("hello"));
  await quiet(async () => {
    await other.drain();
    await until(() =>
      storage.sql.exec(`SELECT 1 FROM event_outbox WHERE error IS NOT NULL`).toArray().length === 1
    );
  });
  assertStrictEquals(second.posts.length, 1);
});

Deno.test("SessionSentinel events: an approval question and a failed job's run are posted", async () => {
  const paused: TurnExecutor = (m, _history, _signal, _progress, approvals) => {
    if (approvals?.resume) return answering(m, [], _signal, _progress);
    return Promise.resolve({
      reply: "",
      messages: [{ role: "user", content: m.text }, {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "c9",
          type: "function",
          function: { name: "act", arguments: '{"n":1}' },
        }],
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
      steps: 1,
      paused: [{ call_id: "c9", tool: "act", arguments: '{"n":1}' }],
    });
  };
  const { sink, posts } = recordingSink();
  const sentinel = new SessionSentinel(sqliteStorage(), paused, { ...options, events: sink });
  const { seq } = sentinel.submit(message("act"));
  await sentinel.drain();
  await until(() => posts.length === 1);
  assertEquals(posts[0].body.type, "approval.requested");
  assertEquals(posts[0].body.data.seq, seq);
  assertEquals(posts[0].body.data.tool, "act");
  assertEquals(posts[0].body.data.arguments, { n: 1 });
  assertEquals(sentinel.answerApproval(seq, "once", "api"), "answered");
  await sentinel.drain();
  await until(() => posts.length === 2);
  assertEquals(posts[1].body.type, "turn.completed");

  const jobs = recordingSink();
  const failing = new SessionSentinel(sqliteStorage(), answering, {
    ...options,
    events: jobs.sink,
  });
  const job = failing.submit(message("fail at nine", { job_id: "7" }));
  await failing.drain();
  await until(() => jobs.posts.length === 2);
  assertEquals(jobs.posts.map((p) => p.body.type).sort(), ["job.failed", "turn.failed"]);
  const jobFailed = jobs.posts.find((p) => p.body.type === "job.failed")!;
  assertEquals(jobFailed.body.data.job_id, "7");
  assertEquals(jobFailed.body.data.seq, job.seq);
});

Deno.test("SessionSentinel events: without an events sink nothing is written", async () => {
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, answering, options);
  sentinel.submit(message("hello"));
  await sentinel.drain();
  // Not a row, nor the table: the event outbox is created with a session's first event.
  const tables = storage.sql.exec(`SELECT name FROM sqlite_master WHERE name = 'event_outbox'`);
  assertEquals(tables.toArray().length, 0);
});

Deno.test("SessionSentinel events: an event a dead instance left unsent is posted by the next, same webhook-id", async () => {
  const storage = sqliteStorage();
  const hanging: EventSink = { post: () => new Promise(() => {}) };
  const before = new SessionSentinel(storage, answering, { ...options, events: hanging });
  before.submit(message("hello"));
  await before.drain();
  const stored = storage.sql.exec(`SELECT webhook_id FROM event_outbox`).toArray();
  assertEquals(stored.length, 1);
  const { sink, posts } = recordingSink();
  const after = new SessionSentinel(storage, answering, { ...options, events: sink });
  await after.drain();
  await until(() => posts.length === 1);
  assertStrictEquals(posts[0].webhookId, stored[0].webhook_id);
});

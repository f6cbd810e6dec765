// Unit tests for tracing a chat turn: the session context on a send's log lines, and the run timeline a chat turn records; Deno.
import { assert, assertEquals } from "@std/assert";
import {
  type ContextFields,
  currentContext,
  log,
  type LogLevel,
  ndjsonTransport,
  readNdjson,
  setLogLevel,
  setLogSink,
  withSessionContext,
} from "../runtime/mod.ts";
import { parseCommand, type ReplyChannel } from "../chat/mod.ts";
import { type InboundMessage, type RunEvent, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { ONE_TOOL_TURN_EVENTS, options, recordingChannel } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { inspectSession } from "./session_inspector.ts";
import { currentTurnJobs } from "./turn_jobs.ts";

/** A Telegram message of chat 42, as the webhook route makes it. */
function chatMessage(text: string, deliveryKey: string): InboundMessage {
  const context: ContextFields = {
    platform: "telegram",
    chat_id: "42",
    user_id: "42",
    session_key: "telegram:42",
    message_id: deliveryKey,
  };
  return { text, deliveryKey, context, reply: { platform: "telegram", chat_id: 42 } };
}

/** Lines logged while the returned `stop` has not been called, parsed, with their level. */
function captureLog(): {
  lines: { level: LogLevel; line: Record<string, unknown> }[];
  stop(): void;
} {
  const lines: { level: LogLevel; line: Record<string, unknown> }[] = [];
  const restore = setLogSink((level, text) => lines.push({ level, line: JSON.parse(text) }));
  return {
    lines,
    stop: () => {
      restore();
      setLogLevel("info");
    },
  };
}

/** Resolves with `probe()`'s first truthy value, looked for after each turn of the event loop. */
async function until<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 1_000; i++) {
    const found = probe();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throw new Error("never came");
}

/** An executor that calls one tool (reported as the agent loop reports it), then answers. */
const toolThenAnswer: TurnExecutor = (message, _history, _signal, progress) => {
  progress.emit?.("model.completed", { step: 1, duration_ms: 5, tool_calls: 1 });
  progress.emit?.("tool.started", { tool: "session_info", call_id: "c1" });
  progress.emit?.("tool.completed", { tool: "session_info", call_id: "c1", duration_ms: 1 });
  progress.emit?.("message.delta", { delta: "re: " });
  progress.emit?.("model.completed", { step: 2, duration_ms: 5, tool_calls: 0 });
  return Promise.resolve({
    reply: `re: ${message.text}`,
    messages: [{ role: "user", content: message.text }, {
      role: "assistant",
      content: `re: ${message.text}`,
    }],
    usage: { prompt_tokens: 3, completion_tokens: 2 },
  });
};

Deno.test("SessionSentinel logs a reply the platform refused with the turn's session key, chat and outbox row", async () => {
  const refusing: ReplyChannel = {
    split: (_target, text) => [text],
    send: () =>
      Promise.resolve({
        ok: false as const,
        status: 400,
        retryable: false,
        message: "400 Bad Request: chat not found",
      }),
    inDoubt: () => Promise.resolve("resend_marked" as const),
  };
  const sentinel = new SessionSentinel(sqliteStorage(), toolThenAnswer, {
    ...options,
    channel: refusing,
  });
  const message = chatMessage("hello", "tg:1");
  const log = captureLog();
  try {
    // Bound as the session object binds its entry points: the submit with the message's context,
    // the drain (the alarm's, or the one the submit starts) with none of a message's.
    const receipt = withSessionContext(message.context, {}, () => sentinel.submit(message));
    await withSessionContext({}, {}, () => sentinel.drain());
    assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
    const failed = log.lines.find((l) => l.line.message === "reply not delivered");
    assert(failed, `no "reply not delivered" line in ${JSON.stringify(log.lines)}`);
    assertEquals(failed.level, "error");
    assertEquals(
      [failed.line.session_key, failed.line.platform, failed.line.chat_id],
      ["telegram:42", "telegram", "42"],
    );
    assertEquals([failed.line.seq, failed.line.kind, failed.line.part], [
      receipt.seq,
      "reply",
      "1/1",
    ]);
    assertEquals(failed.line.error, "400 Bad Request: chat not found");
  } finally {
    log.stop();
  }
});

Deno.test("SessionSentinel logs a notice's failed send with its message's context, also from a drain bound to none", async () => {
  const storage = sqliteStorage();
  const channel = (crash: boolean): ReplyChannel => ({
    split: (_target, text) => [text],
    send: (_target, _text, part) => {
      part.leaving?.();
      // The first instance dies while the request is out; the platform refuses the second's.
      if (crash) return new Promise<never>(() => {});
      return Promise.resolve({
        ok: false as const,
        status: 403,
        retryable: false,
        message: "403 Forbidden: bot was blocked by the user",
      });
    },
    inDoubt: () => Promise.resolve("resend" as const),
  });
  const message = { ...chatMessage("/new", "tg:2"), command: parseCommand("/new") };
  const before = new SessionSentinel(storage, toolThenAnswer, {
    ...options,
    channel: channel(true),
  });
  withSessionContext(message.context, {}, () => before.submit(message));
  const log = captureLog();
  try {
    // A restarted instance: its first drain, bound to no message, sends the notice left unsent.
    const after = new SessionSentinel(storage, toolThenAnswer, {
      ...options,
      channel: channel(false),
    });
    await withSessionContext({}, {}, () => after.drain());
    const failed = await until(() =>
      log.lines.find((l) => l.line.message === "reply not delivered")
    );
    assertEquals(
      [failed.line.session_key, failed.line.platform, failed.line.chat_id, failed.line.kind],
      ["telegram:42", "telegram", "42", "notice"],
    );
  } finally {
    log.stop();
  }
});

Deno.test("SessionSentinel records a chat turn's timeline (model calls, tool calls, sends) for the inspector, deltas not stored", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const sentinel = new SessionSentinel(storage, toolThenAnswer, {
    ...options,
    channel: recordingChannel(sent),
  });
  const receipt = sentinel.submit(chatMessage("hello", "tg:3"));
  await sentinel.drain();
  assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
  assertEquals(sent, ["re: hello"]);
  const runs = inspectSession(storage)!.runs;
  assertEquals(runs.map((r) => r.seq), [receipt.seq]);
  const events = runs[0].events;
  assertEquals(events.map((e) => e.type), ONE_TOOL_TURN_EVENTS);
  assertEquals(events[5].data.part, "1/1");
  assertEquals(typeof events[5].duration_ms, "number");
  assertEquals(events[1].duration_ms, 5, "a model call's own duration");
  // Small rows: the reply's text is in the outbox and the transcript, not again here.
  assertEquals(events[6].data, { usage: { prompt_tokens: 3, completion_tokens: 2 } });
});

Deno.test("SessionSentinel keeps the timeline's own events (model calls) out of a run's event stream", async () => {
  const sentinel = new SessionSentinel(sqliteStorage(), toolThenAnswer, options);
  const receipt = sentinel.submit({
    text: "via api",
    context: { session_key: "api:1" },
    events: true,
  });
  await sentinel.drain();
  await sentinel.outcome(receipt.seq);
  const transport = ndjsonTransport<RunEvent>();
  assert(sentinel.subscribe(receipt.seq, transport));
  const types: string[] = [];
  for await (const event of readNdjson<RunEvent>(transport.readable)) types.push(event.type);
  assertEquals(types, [
    "run.queued",
    "run.started",
    "tool.started",
    "tool.completed",
    "message.delta",
    "run.completed",
  ]);
});

Deno.test("SessionSentinel runs each turn in one frame of its own: its message's context alone (async delivery off), its jobs, its seq on log lines", async () => {
  const seen: { context: Record<string, unknown>; jobs: boolean }[] = [];
  const probing: TurnExecutor = (message, history, signal, progress) => {
    seen.push({ context: { ...currentContext() }, jobs: currentTurnJobs() !== null });
    log.info("turn probe");
    return toolThenAnswer(message, history, signal, progress);
  };
  const sentinel = new SessionSentinel(sqliteStorage(), probing, options);
  const message: InboundMessage = {
    text: "hi",
    deliveryKey: "api:frame",
    context: { platform: "api", session_key: "api:frame", chat_id: "frame" },
  };
  const lines = captureLog();
  try {
    // The drain runs in the frame of another entry (stale fields the turn's message never set).
    const receipt = sentinel.submit(message);
    await withSessionContext(
      { thread_id: "stale", user_id: "someone-else" },
      { user_name: "fallback" },
      () => sentinel.drain(),
    );
    assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
    assertEquals(seen.length, 1);
    assertEquals(seen[0].jobs, true);
    assertEquals(seen[0].context, {
      platform: "api",
      chat_id: "frame",
      chat_name: "",
      thread_id: "",
      user_id: "",
      user_name: "fallback",
      session_key: "api:frame",
      message_id: "",
      job_id: "",
      async_delivery: false,
    });
    const probe = lines.lines.find((l) => l.line.message === "turn probe");
    assertEquals([probe?.line.seq, probe?.line.thread_id], [receipt.seq, undefined]);
  } finally {
    lines.stop();
  }
});

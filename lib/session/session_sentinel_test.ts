// Unit tests for lib/session/session_sentinel.ts over node:sqlite standing in for Durable Object SQLite; Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { SessionSentinel, type TurnExecutor } from "./mod.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { parseCommand } from "../chat/mod.ts";

Deno.test("SessionSentinel.drain() entered concurrently still runs one turn at a time, in order", async () => {
  const storage = sqliteStorage();
  const exec = recordingExecutor();
  const sentinel = new SessionSentinel(storage, exec.execute, options);
  const texts = ["a", "b", "c", "d", "e"];
  const receipts = [];
  for (const t of texts) receipts.push(await sentinel.submit(msg(t)));
  await Promise.all([sentinel.drain(), sentinel.drain(), sentinel.drain()]);
  assertStrictEquals(exec.state.peak, 1);
  assertEquals(exec.state.order, texts);
  for (const [i, r] of receipts.entries()) {
    assertEquals(await sentinel.outcome(r.seq), {
      status: "completed",
      reply: `re: ${texts[i]}`,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  }
  assertEquals(sentinel.snapshot().messages.length, 10);
});

Deno.test("SessionSentinel.submit() stores a delivery once and answers repeats with its seq", async () => {
  let now = 1_000_000;
  const sentinel = new SessionSentinel(sqliteStorage(), recordingExecutor().execute, {
    ...options,
    now: () => now,
  });
  const first = await sentinel.submit(msg("x", "d1"));
  assertEquals(await sentinel.submit(msg("x", "d1")), { seq: first.seq, duplicate: true });
  assertStrictEquals(sentinel.snapshot().queued, 1);
  now += 25 * 60 * 60 * 1000;
  assertEquals(
    (await sentinel.submit(msg("x", "d1"))).duplicate,
    false,
    "after 24 h the key is forgotten",
  );
});

Deno.test("SessionSentinel recovers a dead executor's claim and ignores that executor's late end", async () => {
  const storage = sqliteStorage();
  const dead = recordingExecutor();
  const held = dead.hold("first");
  const before = new SessionSentinel(storage, dead.execute, options);
  const first = await before.submit(msg("first"));
  await before.submit(msg("second"));
  const abandoned = before.drain();
  while (dead.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  assertStrictEquals(before.snapshot().running, true);

  // A new instance on the same storage is what a restart looks like; the old executor is "dead".
  const live = recordingExecutor();
  const after = new SessionSentinel(storage, live.execute, options);
  await after.drain();
  assertEquals(
    live.state.order,
    ["first", "second"],
    "the interrupted turn runs again before the queued one",
  );

  held.resolve();
  await abandoned;
  assertEquals(
    after.snapshot().messages.map((m) => m.content),
    ["first", "re: first", "second", "re: second"],
    "the stale executor wrote nothing",
  );
  assertEquals((await after.outcome(first.seq)).status, "completed");
});

Deno.test("SessionSentinel fails a message interrupted maxAttempts times instead of rerunning it forever", async () => {
  const storage = sqliteStorage();
  const receipt = await new SessionSentinel(storage, recordingExecutor().execute, options).submit(
    msg("poison"),
  );
  for (let attempt = 0; attempt < options.maxAttempts; attempt++) {
    const exec = recordingExecutor();
    exec.hold("poison");
    const doomed = new SessionSentinel(storage, exec.execute, options);
    void doomed.drain();
    while (exec.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  }
  const last = recordingExecutor();
  const sentinel = new SessionSentinel(storage, last.execute, options);
  await sentinel.drain();
  assertEquals(last.state.order, []);
  const outcome = await sentinel.outcome(receipt.seq);
  assertEquals(outcome.status, "failed");
  assertEquals(outcome.status === "failed" && outcome.error.type, "turn_interrupted");
  assertEquals(sentinel.snapshot().running, false);
});

Deno.test("SessionSentinel gives a turn a bounded history window that starts at a user message", async () => {
  const exec = recordingExecutor();
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    historyWindow: 5,
  });
  for (let i = 0; i < 30; i++) await sentinel.submit(msg(`m${i}`));
  await sentinel.drain();
  const last = exec.state.histories.at(-1)!;
  assertEquals(last.length, 4, "5 newest rows, trimmed to start at a user message");
  assertEquals(last[0], { role: "user", content: "m27" });
  assertStrictEquals(sentinel.snapshot().messages.length, 60);
});

Deno.test("SessionSentinel releases the claim when a turn throws, and the next message runs", async () => {
  let calls = 0;
  const execute: TurnExecutor = (message) => {
    if (++calls === 1) return Promise.reject(new Error("boom"));
    return Promise.resolve({
      reply: message.text,
      messages: [{ role: "user", content: message.text }, {
        role: "assistant",
        content: message.text,
      }],
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  };
  const sentinel = new SessionSentinel(sqliteStorage(), execute, options);
  const bad = await sentinel.submit(msg("bad"));
  const good = await sentinel.submit(msg("good"));
  await sentinel.drain();
  assertEquals(await sentinel.outcome(bad.seq), {
    status: "failed",
    error: { message: "the turn failed", type: "turn_error" },
  });
  assertEquals((await sentinel.outcome(good.seq)).status, "completed");
  assertEquals(sentinel.snapshot(), {
    running: false,
    queued: 0,
    messages: [{ role: "user", content: "good" }, { role: "assistant", content: "good" }],
    omitted: 0,
  });
});

Deno.test("SessionSentinel /stop unlocks a still-starting turn whose executor ignores its signal", async () => {
  const storage = sqliteStorage();
  const gate = Promise.withResolvers<void>();
  let ran = 0;
  const execute: TurnExecutor = async (message) => {
    ran++;
    if (message.text === "hung") await gate.promise; // never looks at the signal, never calls the model
    return {
      reply: message.text,
      messages: [{ role: "user", content: message.text }, { role: "assistant", content: "late" }],
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    };
  };
  const sentinel = new SessionSentinel(storage, execute, options);
  const hung = await sentinel.submit({ ...msg("hung"), command: null });
  const drain = sentinel.drain();
  while (ran === 0) await new Promise((r) => setTimeout(r, 1));
  const stop = await sentinel.submit({ ...msg("/stop"), command: parseCommand("/stop") });
  assertEquals(stop.notice, "Stopped. The session is unlocked.");
  assertEquals(sentinel.snapshot().running, false);
  assertEquals((await sentinel.outcome(hung.seq)).status, "failed");
  await drain; // the drain is free at once although the executor still hangs
  const next = await sentinel.submit({ ...msg("next"), command: null });
  await sentinel.drain();
  assertEquals((await sentinel.outcome(next.seq)).status, "completed");
  gate.resolve();
  await new Promise((r) => setTimeout(r, 5));
  assertEquals(
    sentinel.snapshot().messages.map((m) => m.content),
    ["next", "late"],
    "the stopped run's late end wrote nothing",
  );
});

Deno.test("SessionSentinel sends the queued notice at most once per 30 s, and never with busyNotice off", async () => {
  let now = 5_000_000;
  const exec = recordingExecutor();
  exec.hold("slow");
  const platformMsg = (text: string) => ({
    ...msg(text),
    reply: { platform: "telegram", chat_id: 1 },
  });
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    now: () => now,
  });
  await sentinel.submit(platformMsg("slow"));
  void sentinel.drain();
  while (exec.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  assertEquals(
    (await sentinel.submit(platformMsg("a"))).notice,
    "Queued — I'll answer after the current reply.",
  );
  assertEquals((await sentinel.submit(platformMsg("b"))).notice, undefined);
  now += 31_000;
  assertEquals(
    (await sentinel.submit(platformMsg("c"))).notice,
    "Queued — I'll answer after the current reply.",
  );
  assertEquals(
    (await sentinel.submit(msg("api caller"))).notice,
    undefined,
    "only chat users get notices",
  );

  const quiet = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    busyNotice: false,
  });
  await quiet.submit(platformMsg("x"));
  assertEquals((await quiet.submit(platformMsg("y"))).notice, undefined);
});

Deno.test("SessionSentinel adds columns a database from an older release lacks", () => {
  const storage = sqliteStorage();
  storage.db.exec(
    `CREATE TABLE outbox (seq INTEGER NOT NULL, part INTEGER NOT NULL, count INTEGER NOT NULL,
     text TEXT NOT NULL, sent_at INTEGER, error TEXT, PRIMARY KEY (seq, part))`,
  );
  new SessionSentinel(storage, recordingExecutor().execute, options);
  new SessionSentinel(storage, recordingExecutor().execute, options); // and only once
  const columns = storage.db.prepare(`SELECT name FROM pragma_table_info('outbox')`).all();
  assertEquals(columns.map((c) => c.name).includes("attempted_at"), true);
});

Deno.test("SessionSentinel built on a dead executor's claim takes it up on first use, without waiting for the alarm", async () => {
  const storage = sqliteStorage();
  const dead = recordingExecutor();
  dead.hold("first");
  const before = new SessionSentinel(storage, dead.execute, options);
  await before.submit(msg("first"));
  await before.submit(msg("second"));
  void before.drain();
  while (dead.state.running === 0) await new Promise((r) => setTimeout(r, 1));

  // The restart: nothing calls drain() or alarm(); building the sentinel (any first call) must.
  const live = recordingExecutor();
  const after: SessionSentinel = new SessionSentinel(storage, live.execute, {
    ...options,
    startDrain: () => void after.drain(),
  });
  for (let waited = 0; live.state.order.length < 2 && waited < 2_000; waited += 10) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assertEquals(live.state.order, ["first", "second"]);
  while (after.snapshot().running) await new Promise((r) => setTimeout(r, 5));
  assertEquals(after.snapshot().messages.length, 4);
});

Deno.test("SessionSentinel with startDrain starts an idle session's turn on submit, the alarm only a watchdog", async () => {
  const storage = sqliteStorage();
  const now = 7_000_000;
  const exec = recordingExecutor();
  const sentinel: SessionSentinel = new SessionSentinel(storage, exec.execute, {
    ...options,
    now: () => now,
    startDrain: () => void sentinel.drain(),
  });
  const receipt = await sentinel.submit(msg("at once"));
  assertEquals(sentinel.snapshot().running, true, "claimed in submit's own synchronous step");
  assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
  assertEquals(storage.alarms, [now + options.leaseMs], "the alarm is only the watchdog");
});

Deno.test("SessionSentinel keeps every message of a long turn in order (inserted in batches)", async () => {
  const messages: ChatMessage[] = Array.from({ length: 45 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `m${i}`,
  }));
  const sentinel = new SessionSentinel(sqliteStorage(), () =>
    Promise.resolve({
      reply: "done",
      messages,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    }), options);
  await sentinel.submit(msg("long"));
  await sentinel.drain();
  assertEquals(sentinel.snapshot().messages.map((m) => m.content), messages.map((m) => m.content));
});

Deno.test("SessionSentinel answers the same request within a minute of its failed turn with that outcome, then runs it again", async () => {
  let now = 9_000_000;
  let calls = 0;
  const execute: TurnExecutor = () => {
    calls++;
    return Promise.reject(new Error("down"));
  };
  const sentinel = new SessionSentinel(sqliteStorage(), execute, { ...options, now: () => now });
  const request = { ...msg("retry me"), requestHash: "h1" };
  const first = await sentinel.submit(request);
  await sentinel.drain();
  assertEquals((await sentinel.outcome(first.seq)).status, "failed");
  now += 59_000;
  assertEquals(await sentinel.submit(request), { seq: first.seq, duplicate: true });
  await sentinel.drain();
  assertStrictEquals(calls, 1);
  now += 2_000;
  const later = await sentinel.submit(request);
  assertStrictEquals(later.duplicate, false, "after a minute it is a new request");
  await sentinel.drain();
  assertStrictEquals(calls, 2);
});

Deno.test("SessionSentinel ignores a dead executor that ends while the recovered run of the same message holds the session", async () => {
  const storage = sqliteStorage();
  const dead = recordingExecutor();
  const deadHold = dead.hold("first");
  const before = new SessionSentinel(storage, dead.execute, options);
  await before.submit(msg("first"));
  const abandoned = before.drain();
  while (dead.state.running === 0) await new Promise((r) => setTimeout(r, 1));

  const live = recordingExecutor();
  const liveHold = live.hold("first");
  const after = new SessionSentinel(storage, live.execute, options);
  const recovered = after.drain();
  while (live.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  deadHold.resolve(); // same message, same seq: only the generation tells the two runs apart
  await abandoned;
  assertEquals(after.snapshot().messages, [], "the stale run wrote nothing");
  assertStrictEquals(after.snapshot().running, true, "nor released the live run's claim");
  liveHold.resolve();
  await recovered;
  assertEquals(after.snapshot().messages.map((m) => m.content), ["first", "re: first"]);
});

Deno.test("SessionSentinel drops a dead attempt's run events: a late subscriber sees one start and the rerun's deltas", async () => {
  const storage = sqliteStorage();
  const started = Promise.withResolvers<void>();
  const dying: TurnExecutor = (_message, _history, _signal, progress) => {
    progress.emit?.("message.delta", { delta: "half-" });
    started.resolve();
    return new Promise<never>(() => {}); // the process dies mid-stream
  };
  const before = new SessionSentinel(storage, dying, options);
  const { seq } = await before.submit({ ...msg("hi"), events: true });
  void before.drain();
  await started.promise;

  const finishing: TurnExecutor = (message, _history, _signal, progress) => {
    progress.emit?.("message.delta", { delta: "whole" });
    return Promise.resolve({
      reply: `re: ${message.text}`,
      messages: [{ role: "user", content: message.text }, { role: "assistant", content: "whole" }],
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  };
  const after = new SessionSentinel(storage, finishing, options);
  await after.drain();
  const seen: string[] = [];
  after.subscribe(seq, {
    write: (event) => {
      seen.push(event.type === "message.delta" ? `delta:${event.data.delta}` : event.type);
      return true;
    },
    close: () => {},
  });
  assertEquals(seen, ["run.queued", "run.started", "delta:whole", "run.completed"]);
});

Deno.test("SessionSentinel tells a chat user their turn was given up after maxAttempts interruptions", async () => {
  const storage = sqliteStorage();
  const chat = { ...msg("poison"), reply: { platform: "telegram", chat_id: 1 } };
  const receipt = await new SessionSentinel(storage, recordingExecutor().execute, options).submit(
    chat,
  );
  for (let attempt = 0; attempt < options.maxAttempts; attempt++) {
    const exec = recordingExecutor();
    exec.hold("poison");
    void new SessionSentinel(storage, exec.execute, options).drain();
    while (exec.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  }
  const sent: string[] = [];
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  await sentinel.drain();
  assertEquals((await sentinel.outcome(receipt.seq)).status, "failed");
  assertEquals(sent.length, 1, "never silence");
  assertMatch(sent[0], /interrupted 3 times/);
  assertEquals(sentinel.snapshot().running, false);
});

// Unit tests for lib/session/directory_sync.ts and directory_entry.ts over node:sqlite standing in for Durable Object SQLite; Deno.
import { assert, assertEquals } from "@std/assert";
import { setLogSink } from "../runtime/mod.ts";
import { directoryTitle } from "./directory_entry.ts";
import { type DirectoryEntry, type InboundMessage, SessionSentinel } from "./mod.ts";
import { options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

const message = (text: string): InboundMessage => ({
  text,
  context: { session_key: "api.acme:s1", platform: "api" },
});

/** A writer recording every row it stores, failing while `down` is set. */
function recordingWriter() {
  const rows: DirectoryEntry[] = [];
  const state = { down: false, attempts: 0 };
  return {
    rows,
    state,
    upsert(entry: DirectoryEntry): Promise<void> {
      state.attempts++;
      if (state.down) return Promise.reject(new Error("D1_ERROR: no such table"));
      rows.push(entry);
      return Promise.resolve();
    },
  };
}

/** Past the sync's gathering of changes (250 ms) and its write. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

Deno.test("DirectorySync writes the row at queued, running and idle, with title, counts and tenant", async () => {
  let now = 1_000_000;
  const writer = recordingWriter();
  const exec = recordingExecutor();
  const hold = exec.hold("  hello\n  world, a long first message  ");
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    directory: writer,
    now: () => now,
  });
  sentinel.submit(message("  hello\n  world, a long first message  "));
  await settle();
  assertEquals(writer.rows.at(-1)?.status, "queued");
  now += 1_000;
  const drained = sentinel.drain();
  await settle();
  assertEquals(writer.rows.at(-1)?.status, "running");
  assertEquals(writer.rows.at(-1)?.last_activity_at, 1_001_000);
  now += 1_000;
  hold.resolve();
  await drained;
  await settle();
  const last = writer.rows.at(-1)!;
  assertEquals(last, {
    key: "api.acme:s1",
    tenant: "acme",
    platform: "api",
    title: "hello world, a long first message",
    created_at: 1_000_000,
    last_activity_at: 1_002_000,
    messages: 1,
    turns: 1,
    status: "idle",
    queued: 0,
    user: null,
  });
  // Per-commit reads are cheap and rows are written only when they changed.
  assertEquals(new Set(writer.rows.map((r) => JSON.stringify(r))).size, writer.rows.length);
});

Deno.test("DirectorySync never fails a turn when the writer fails, and writes the row on the retry alarm", async () => {
  const restore = setLogSink(() => {});
  try {
    const writer = recordingWriter();
    writer.state.down = true;
    const storage = sqliteStorage();
    const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
      ...options,
      directory: writer,
    });
    const receipt = sentinel.submit(message("hi"));
    await sentinel.drain();
    assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
    await settle();
    assert(writer.state.attempts > 0);
    assertEquals(writer.rows.length, 0);
    assert(storage.alarms.length > 0, "a retry alarm is armed");
    writer.state.down = false;
    await sentinel.alarm();
    await settle();
    assertEquals(writer.rows.at(-1)?.status, "idle");
    assertEquals(writer.rows.at(-1)?.turns, 1);
  } finally {
    restore();
  }
});

Deno.test("directoryTitle() collapses whitespace and cuts at 80 characters", () => {
  assertEquals(directoryTitle(" a \n\t b "), "a b");
  const long = directoryTitle("x".repeat(200));
  assertEquals([...long].length, 80);
  assert(long.endsWith("…"));
});

Deno.test("DirectorySync: a fresh instance's alarm writes the row its predecessor may have lost", async () => {
  const storage = sqliteStorage();
  // The first instance's writes never land: it dies with them in flight.
  const alarmsBefore = storage.alarms.length;
  const first = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    leaseMs: 120_000,
    directory: { upsert: () => new Promise<void>(() => {}) },
  });
  first.submit(message("hi"));
  await first.drain();
  await settle();
  assert(storage.alarms.length > alarmsBefore, "an alarm is due");
  const writer = recordingWriter();
  const next = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    directory: writer,
  });
  await next.alarm();
  await settle();
  assertEquals(writer.rows.map((r) => [r.key, r.status, r.turns]), [["api.acme:s1", "idle", 1]]);
  // The same instance's next alarm writes nothing new.
  await next.alarm();
  await settle();
  assertEquals(writer.rows.length, 1);
});

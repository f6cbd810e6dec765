// Unit tests for what a session stores: rows under SQLite's size cap (spill.ts), messages that cannot be read back (inbox_columns.ts, unreadable_message.ts); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { DatabaseSync } from "node:sqlite";
import { inspectSession } from "./session_inspector.ts";
import { type InboundMessage, SessionSentinel } from "./mod.ts";
import { MAX_STORED_DEPTH, UNREADABLE } from "./inbox_columns.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { INLINE_CHARS, SpillStore } from "./spill.ts";
import { SessionDb } from "./session_db.ts";
import { migrate } from "./schema.ts";

/** Durable Object SQLite's cap on a row, in bytes (2 MB; workerd's local build measured ~2.2 MB). */
const ROW_CAP = 2_000_000;

/** The largest row of each table holding a session's texts, in UTF-8 bytes. */
function largestRows(db: DatabaseSync): Record<string, number> {
  const size = (columns: string[]) =>
    columns.map((c) => `coalesce(length(CAST(${c} AS BLOB)), 0)`).join(" + ");
  const tables: Record<string, string[]> = {
    inbox: ["message", "outcome"],
    transcript: ["message"],
    run_events: ["data"],
    spill: ["text"],
  };
  return Object.fromEntries(
    Object.entries(tables).map(([table, columns]) => {
      const row = db.prepare(`SELECT max(${size(columns)}) AS n FROM ${table}`).get() as {
        n: number | null;
      };
      return [table, row.n ?? 0];
    }),
  );
}

/** ~900 KB of text with multi-byte characters and surrogate pairs (a part boundary must not split one). */
function large(): string {
  return "a long line — é 日本 🙂🙂\n".repeat(40_000);
}

Deno.test("SpillStore.write() keeps a short text in its column and a long one in parts that read back whole", () => {
  const storage = sqliteStorage();
  const db = new SessionDb(storage);
  migrate(db);
  const spill = new SpillStore(db);
  const long = "🙂".repeat(INLINE_CHARS); // a pair per character: any cut could fall inside one
  const [short, head] = db.transaction((tx) => [
    spill.write(tx, "t:1:", "short"),
    spill.write(tx, "t:2:", long, { role: "user" }),
  ]);
  assertStrictEquals(short, "short");
  assert(head.length < 200, head.slice(0, 200));
  assertEquals(JSON.parse(head).role, "user");
  assertStrictEquals(spill.read("t:2:", head), long);
  // Another owner's name in a head is not followed: the column reads as it is.
  assertStrictEquals(spill.read("t:3:", head), head);
  db.transaction((tx) => spill.removeUnder(tx, "t:2:"));
  assertStrictEquals(
    spill.tryJson("t:2:", head),
    undefined,
    "a head whose parts are gone is unreadable",
  );
});

Deno.test("SessionSentinel keeps every row under SQLite's 2 MB cap for a ~900 KB input stored twice and a ~2.7 MB reply, and reads it all back", async () => {
  const storage = sqliteStorage();
  const text = large();
  const reply = text.repeat(3);
  const sentinel = new SessionSentinel(storage, (message) =>
    Promise.resolve({
      reply,
      messages: [{ role: "user", content: message.text }, { role: "assistant", content: reply }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    }), options);
  // As a Responses request is stored: the input as the turn, and again as its input items.
  const message: InboundMessage = {
    ...msg(text),
    events: true,
    meta: { api: "responses", items: [{ role: "user", text }] },
  };
  const { seq } = await sentinel.submit(message);
  await sentinel.drain();
  const outcome = await sentinel.outcome(seq);
  assertStrictEquals(outcome?.status, "completed");
  assertStrictEquals(outcome?.status === "completed" && outcome.reply, reply);
  const sizes = largestRows(storage.db);
  for (const [table, bytes] of Object.entries(sizes)) {
    assert(bytes < ROW_CAP, `${table}: a row of ${bytes} bytes`);
  }
  assertEquals(sentinel.record(seq)?.message.meta, message.meta);
  assertStrictEquals(sentinel.snapshot().messages.at(-1)?.content, reply);
  const completed = sentinel.record(seq)?.state;
  assertStrictEquals(completed?.status === "completed" && completed.output, reply);
  const inspected = inspectSession(storage)!;
  assertStrictEquals(inspected.inbox[0].text, text.slice(0, 500));
  const events = inspected.runs[0].events;
  assertStrictEquals(events.find((e) => e.type === "run.completed")?.data.output, reply);
  // The session goes on: a small message after, with the large turn in its history.
  const next = await sentinel.submit(msg("small"));
  await sentinel.drain();
  assertStrictEquals((await sentinel.outcome(next.seq))?.status, "completed");
});

Deno.test("SessionSentinel.submit() refuses a message nested past MAX_STORED_DEPTH with a notice naming the limit, storing nothing", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < MAX_STORED_DEPTH + 10; i++) deep = { a: deep };
  const message = {
    ...msg("deep"),
    meta: { deep },
    reply: { platform: "generic", chat_id: "c1" },
  } as unknown as InboundMessage;
  const receipt = await sentinel.submit(message);
  assertStrictEquals(receipt.refused, "too_large");
  assert(
    receipt.notice?.includes(`nesting deeper than ${MAX_STORED_DEPTH} levels`),
    receipt.notice,
  );
  assertStrictEquals(sentinel.snapshot().queued, 0);
  const rows = storage.db.prepare(`SELECT count(*) AS n FROM inbox`).get() as { n: number };
  assertStrictEquals(rows.n, 0);
});

Deno.test("SessionSentinel fails a queued message whose stored JSON cannot be read back, runs the next, and stop, reset and inspect work", async () => {
  const storage = sqliteStorage();
  const exec = recordingExecutor();
  const sentinel = new SessionSentinel(storage, exec.execute, options);
  const bad = await sentinel.submit(msg("bad"));
  const good = await sentinel.submit(msg("good"));
  // What finding 1 left behind: a row SQLite's JSON functions cannot read (here not JSON at all).
  storage.db.prepare(`UPDATE inbox SET message = ? WHERE seq = ?`).run('{"text": "bad', bad.seq);
  await sentinel.drain();
  const failed = await sentinel.outcome(bad.seq);
  assertStrictEquals(failed?.status === "failed" && failed.error.type, UNREADABLE);
  assertEquals(exec.state.order, ["good"], "the queue moved on");
  assertStrictEquals((await sentinel.outcome(good.seq))?.status, "completed");
  const inspected = inspectSession(storage)!;
  assertEquals(inspected.inbox.map((m) => [m.seq, m.status]), [[good.seq, "done"], [
    bad.seq,
    "failed",
  ]]);
  assertStrictEquals(sentinel.record(bad.seq), null);
  // A bad row that is running (its executor died), and a bad outcome: still no throw anywhere.
  const third = await sentinel.submit(msg("third"));
  storage.db.prepare(`UPDATE inbox SET outcome = '{' WHERE seq = ?`).run(good.seq);
  storage.db.prepare(`UPDATE inbox SET message = '[' WHERE seq = ?`).run(third.seq);
  assertStrictEquals(inspectSession(storage)!.inbox.length, 3);
  assertStrictEquals(sentinel.control("stop").stopped, false);
  assertStrictEquals(sentinel.control("reset").stopped, false);
  assertStrictEquals(sentinel.snapshot().queued, 0);
  const after = await sentinel.submit(msg("after"));
  await sentinel.drain();
  assertStrictEquals((await sentinel.outcome(after.seq))?.status, "completed");
});

Deno.test("SessionSentinel fails a running message that cannot be read back instead of retrying it, and tells its chat", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const dead = recordingExecutor();
  dead.hold("first");
  const target = { platform: "generic", chat_id: "c1" };
  const before = new SessionSentinel(storage, dead.execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  await before.submit({ ...msg("earlier"), reply: target });
  await before.drain();
  const first = await before.submit({ ...msg("first"), reply: target });
  const abandoned = before.drain();
  while (dead.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  storage.db.prepare(`UPDATE inbox SET message = '{"text":' WHERE seq = ?`).run(first.seq);
  // A restart: the claim is a dead executor's, and its message cannot be read.
  const live = recordingExecutor();
  const after = new SessionSentinel(storage, live.execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  await after.drain();
  const outcome = await after.outcome(first.seq);
  assertStrictEquals(outcome?.status === "failed" && outcome.error.type, UNREADABLE);
  assertEquals(live.state.order.filter((t) => t === "first"), [], "not run again");
  // The notice leaves once the recovery has committed, in the background.
  const told = () => sent.some((t) => t.includes("could not be read back"));
  for (let i = 0; i < 1_000 && !told(); i++) await new Promise((r) => setTimeout(r, 1));
  assert(told(), sent.join(" | "));
  void abandoned;
});

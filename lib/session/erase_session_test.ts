// Unit tests for lib/session/erase_session.ts over node:sqlite standing in for a Durable Object's storage; Deno.
import { assert, assertEquals } from "@std/assert";
import type { DirectoryEntry } from "./directory_entry.ts";
import { type ErasableStorage, eraseSession, sessionOpen } from "./erase_session.ts";
import { SessionSentinel } from "./session_sentinel.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** `sqliteStorage` with a key-value store, deleteAll (every table dropped) and deleteAlarm. */
function erasableStorage() {
  const base = sqliteStorage();
  const map = new Map<string, unknown>();
  const log: string[] = [];
  const storage: ErasableStorage & typeof base = {
    ...base,
    setAlarm(time) {
      log.push("setAlarm");
      return base.setAlarm(time);
    },
    kv: {
      get: <T>(key: string) => map.get(key) as T | undefined,
      put: (key, value) => void map.set(key, value),
      delete: (key) => map.delete(key),
    },
    deleteAll() {
      const tables = base.db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
      ).all() as { name: string }[];
      for (const { name } of tables) base.db.exec(`DROP TABLE "${name}"`);
      map.clear();
      log.push("deleteAll");
      return Promise.resolve();
    },
    deleteAlarm() {
      log.push("deleteAlarm");
      return Promise.resolve();
    },
  };
  return { storage, log };
}

Deno.test("eraseSession() stops a running turn, deletes every table and the alarm, and a new sentinel starts fresh", async () => {
  const { storage, log } = erasableStorage();
  const exec = recordingExecutor();
  const rows: DirectoryEntry[] = [];
  const directory = { upsert: (e: DirectoryEntry) => Promise.resolve(void rows.push(e)) };
  const sentinel = new SessionSentinel(storage, exec.execute, { ...options, directory });
  const first = sentinel.submit(msg("remember kiwi"));
  await sentinel.drain();
  assertEquals((await sentinel.outcome(first.seq)).status, "completed");
  exec.hold("long one");
  const held = sentinel.submit(msg("long one"));
  const waiting = sentinel.submit(msg("queued behind"));
  const drained = sentinel.drain();
  const heldOutcome = sentinel.outcome(held.seq);
  const waitingOutcome = sentinel.outcome(waiting.seq);
  while (exec.state.running === 0) await new Promise((resolve) => setTimeout(resolve, 1));

  const erasure = await eraseSession(storage, sentinel, 1_000);
  assertEquals(erasure, { erased: true, stopped: true });
  assertEquals((await heldOutcome).status, "failed");
  assertEquals((await waitingOutcome).status, "failed");
  await drained;
  // The alarm goes before the data, and nothing arms one after.
  const last = log.lastIndexOf("deleteAlarm");
  assert(last >= 0 && log.indexOf("deleteAll") > last, log.join(","));
  assertEquals(log.slice(last).filter((e) => e === "setAlarm"), []);
  assertEquals(
    storage.db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    ).all(),
    [],
  );
  // The erased session's id reads as none until a new message reopens it.
  assertEquals(sessionOpen(storage.kv, false), false);
  assertEquals(await eraseSession(storage, null, 2_000), { erased: false, stopped: false });
  assertEquals(sessionOpen(storage.kv, true), true);
  assertEquals(sessionOpen(storage.kv, false), true);

  const fresh = new SessionSentinel(storage, exec.execute, options);
  const next = fresh.submit(msg("anything left?"));
  await fresh.drain();
  assertEquals((await fresh.outcome(next.seq)).status, "completed");
  assertEquals(exec.state.histories.at(-1), []);
  assertEquals(fresh.snapshot().messages.map((m) => m.content), [
    "anything left?",
    "re: anything left?",
  ]);
  // The closed directory sync wrote nothing after the erasure.
  const written = rows.length;
  await new Promise((resolve) => setTimeout(resolve, 300));
  assertEquals(rows.length, written);
});

Deno.test("eraseSession() keeps the delivery keys the session remembers, nothing else: a delivery sent again after the erasure runs no turn", async () => {
  const { storage } = erasableStorage();
  const exec = recordingExecutor();
  let now = 1_000;
  const sentinel = new SessionSentinel(storage, exec.execute, { ...options, now: () => now });
  const month = 30 * 24 * 60 * 60 * 1000;
  const sms = { ...msg("the secret is kiwi", "twilio:SM9"), keyMemoryMs: month };
  const day = msg("and a day-long one", "telegram:update:9");
  for (const m of [sms, day]) sentinel.submit(m);
  await sentinel.drain();
  assertEquals(exec.state.histories.length, 2);

  now = 5_000;
  assertEquals(await eraseSession(storage, sentinel, now), { erased: true, stopped: false });
  // Only ids and times are left: no text of the session's.
  const left = storage.db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  ).all() as { name: string }[];
  assertEquals(left.map((t) => t.name), ["seen_delivery"]);
  const dump = JSON.stringify(storage.db.prepare("SELECT * FROM seen_delivery").all());
  assert(!dump.includes("kiwi"), dump);
  assertEquals(sessionOpen(storage.kv, false), false);

  assert(sessionOpen(storage.kv, true));
  const fresh = new SessionSentinel(storage, exec.execute, { ...options, now: () => now });
  for (const m of [sms, day]) assertEquals(fresh.submit(m).duplicate, true, m.deliveryKey);
  const next = fresh.submit(msg("a new message", "telegram:update:10"));
  assertEquals(next.duplicate, false);
  await fresh.drain();
  assertEquals(exec.state.histories.length, 3, "only the new message ran");
  assertEquals(exec.state.histories.at(-1), []);
});

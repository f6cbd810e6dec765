// Unit tests for lib/session/claim.ts over node:sqlite; Deno.
import { assertEquals, assertThrows } from "@std/assert";
import { ClaimStore } from "./claim.ts";
import { migrate } from "./schema.ts";
import { SessionDb } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

function claims(): { db: SessionDb; claims: ClaimStore } {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  return { db, claims: new ClaimStore(db) };
}

Deno.test("ClaimStore.take() refuses a second claim while one is held, and grants it after release", () => {
  const { db, claims: store } = claims();
  const first = db.transaction((tx) => store.take(tx, 1, 100));
  assertEquals(first, { seq: 1, generation: 1, conversation: 0 });
  assertEquals(db.transaction((tx) => store.take(tx, 2, 101)), null, "held: no second claim");
  assertEquals(store.holds(first!), true);
  db.transaction((tx) => store.release(tx));
  assertEquals(db.transaction((tx) => store.take(tx, 2, 102)), {
    seq: 2,
    generation: 2,
    conversation: 0,
  });
});

Deno.test("ClaimStore.release() with revoke makes the old holder's claim stale", () => {
  const { db, claims: store } = claims();
  const claim = db.transaction((tx) => store.take(tx, 5, 100))!;
  db.transaction((tx) => store.release(tx, true));
  const again = db.transaction((tx) => store.take(tx, 5, 101))!;
  assertEquals(store.holds(claim), false, "same seq, older generation");
  assertEquals(store.holds(again), true);
});

Deno.test("ClaimStore.takeNoticeSlot() grants one notice per 30 s", () => {
  const { db, claims: store } = claims();
  const slot = (now: number) => db.transaction((tx) => store.takeNoticeSlot(tx, now));
  assertEquals([slot(100_000), slot(120_000), slot(130_001)], [true, false, true]);
});

/** A ClaimStore whose storage counts the statements that read the `run` row. */
function countedClaims(): { db: SessionDb; claims: ClaimStore; runReads: () => number } {
  const storage = sqliteStorage();
  let reads = 0;
  const exec = storage.sql.exec;
  storage.sql.exec = (query, ...bindings) => {
    if (/^\s*SELECT .* FROM run WHERE/s.test(query)) reads++;
    return exec(query, ...bindings);
  };
  const db = new SessionDb(storage);
  migrate(db);
  return { db, claims: new ClaimStore(db), runReads: () => reads };
}

Deno.test("ClaimStore.holds() reads the run row once while nobody writes it", () => {
  const { db, claims: store, runReads } = countedClaims();
  const claim = db.transaction((tx) => store.take(tx, 1, 100))!;
  const before = runReads();
  for (let i = 0; i < 10; i++) assertEquals(store.holds(claim), true);
  assertEquals(runReads() - before, 1, "ten holds(), one read");
  db.transaction((tx) => store.release(tx, true));
  assertEquals(store.holds(claim), false, "a write is seen at once");
});

Deno.test("ClaimStore.state() after a rolled-back take() is the row as stored", () => {
  const { db, claims: store } = claims();
  const before = store.state();
  assertThrows(() =>
    db.transaction((tx) => {
      store.take(tx, 7, 100);
      assertEquals(store.state().seq, 7, "seen inside its transaction");
      throw new Error("roll back");
    })
  );
  assertEquals(store.state(), before, "nothing kept from the rolled-back transaction");
  assertEquals(db.transaction((tx) => store.take(tx, 8, 101))?.generation, 1);
});

Deno.test("ClaimStore built again over an erased and recreated storage reads the fresh row", () => {
  const storage = sqliteStorage();
  const db = new SessionDb(storage);
  migrate(db);
  const old = new ClaimStore(db);
  db.transaction((tx) => old.newConversation(tx));
  const claim = db.transaction((tx) => old.take(tx, 3, 100))!;
  assertEquals(old.holds(claim), true);
  // What an erasure does: every table gone, then the next session's schema.
  const tables = storage.db.prepare(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
  ).all() as { name: string }[];
  for (const { name } of tables) storage.db.exec(`DROP TABLE "${name}"`);
  storage.db.exec("PRAGMA user_version = 0");
  const fresh = new SessionDb(storage);
  migrate(fresh);
  assertEquals(new ClaimStore(fresh).state(), {
    generation: 0,
    seq: null,
    conversation: 0,
    startedAt: null,
  });
});

// Unit tests for lib/session/claim.ts over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
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

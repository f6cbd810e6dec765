// Unit tests for lib/session/session_db.ts over node:sqlite; Deno.
import { assert, assertEquals, assertThrows } from "@std/assert";
import { SessionDb } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

function table() {
  const storage = sqliteStorage();
  storage.db.exec(`CREATE TABLE t (v INTEGER)`);
  return { storage, db: new SessionDb(storage) };
}

Deno.test("SessionDb.transaction() refuses an async callback and writes nothing", () => {
  const { db } = table();
  const error = assertThrows(
    // @ts-expect-error: the type checker refuses a callback that returns a promise.
    () => db.transaction((tx) => Promise.resolve(db.exec(tx, `INSERT INTO t (v) VALUES (1)`))),
  );
  assert(error instanceof TypeError && /cannot be async/.test(error.message));
  assertEquals(db.rows(`SELECT count(*) AS n FROM t`)[0].n, 0);
});

Deno.test("SessionDb.transaction() runs onCommit work after the commit, never after a rollback", () => {
  const { db } = table();
  const seen: number[] = [];
  db.transaction((tx) => {
    db.exec(tx, `INSERT INTO t (v) VALUES (1)`);
    tx.onCommit(() => seen.push(Number(db.rows(`SELECT count(*) AS n FROM t`)[0].n)));
    assertEquals(seen, [], "not before the commit");
  });
  assertEquals(seen, [1]);
  assertThrows(() =>
    db.transaction((tx) => {
      db.exec(tx, `INSERT INTO t (v) VALUES (2)`);
      tx.onCommit(() => seen.push(-1));
      throw new Error("rolled back");
    })
  );
  assertEquals(seen, [1]);
  assertEquals(db.rows(`SELECT count(*) AS n FROM t`)[0].n, 1);
});

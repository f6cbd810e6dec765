// Unit tests for lib/session/schema.ts over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
import { migrate, SCHEMA_VERSION } from "./schema.ts";
import { SessionDb, type SessionStorage } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** Counts the statements run through `storage`. */
function counting(storage: SessionStorage): { storage: SessionStorage; statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    storage: {
      ...storage,
      sql: {
        exec: (query, ...bindings) => {
          statements.push(query);
          return storage.sql.exec(query, ...bindings);
        },
      },
    },
  };
}

Deno.test("migrate() on a database at the current version runs one read and no schema statement", () => {
  const storage = sqliteStorage();
  migrate(new SessionDb(storage));
  const counted = counting(storage);
  migrate(new SessionDb(counted.storage));
  assertEquals(counted.statements, [`SELECT version FROM schema_version WHERE id = 1`]);
});

Deno.test("migrate() brings a first-release database to the current version and keeps its reply parts", () => {
  const storage = sqliteStorage();
  storage.db.exec(
    `CREATE TABLE outbox (seq INTEGER NOT NULL, part INTEGER NOT NULL, count INTEGER NOT NULL,
     text TEXT NOT NULL, sent_at INTEGER, error TEXT, PRIMARY KEY (seq, part));
     INSERT INTO outbox (seq, part, count, text, sent_at) VALUES (7, 0, 2, 'one', 5), (7, 1, 2, 'two', NULL)`,
  );
  const db = new SessionDb(storage);
  migrate(db);
  assertEquals(db.rows(`SELECT version FROM schema_version`)[0].version, SCHEMA_VERSION);
  assertEquals(
    db.rows(`SELECT seq, kind, part, text, sent_at, attempted_at FROM outbox ORDER BY part`)
      .map((row) => ({ ...row })),
    [
      { seq: 7, kind: "reply", part: 0, text: "one", sent_at: 5, attempted_at: null },
      { seq: 7, kind: "reply", part: 1, text: "two", sent_at: null, attempted_at: null },
    ],
  );
});

Deno.test("migrate() keeps attempted_at of a database from a build that had added it", () => {
  const storage = sqliteStorage();
  storage.db.exec(
    `CREATE TABLE outbox (seq INTEGER NOT NULL, part INTEGER NOT NULL, count INTEGER NOT NULL,
     text TEXT NOT NULL, sent_at INTEGER, error TEXT, attempted_at INTEGER, PRIMARY KEY (seq, part));
     INSERT INTO outbox (seq, part, count, text, attempted_at) VALUES (3, 0, 1, 'cut off', 99)`,
  );
  const db = new SessionDb(storage);
  migrate(db);
  assertEquals(db.rows(`SELECT attempted_at FROM outbox`)[0].attempted_at, 99);
});

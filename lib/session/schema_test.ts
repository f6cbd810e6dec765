// Unit tests for lib/session/schema.ts over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
import { LAZY_TABLES, migrate, SCHEMA_VERSION } from "./schema.ts";
import { SessionDb, type SessionStorage, type SqlValue } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** Counts the statements run through `storage`, and those that threw. */
function counting(
  storage: SessionStorage,
): { storage: SessionStorage; statements: string[]; failed: string[] } {
  const statements: string[] = [];
  const failed: string[] = [];
  return {
    statements,
    failed,
    storage: {
      ...storage,
      sql: {
        exec: (query, ...bindings) => {
          statements.push(query);
          try {
            return storage.sql.exec(query, ...bindings);
          } catch (error) {
            failed.push(query);
            throw error;
          }
        },
      },
    },
  };
}

Deno.test("migrate() on a database at the current version runs two reads, no schema statement, and knows its lazy groups", () => {
  const storage = sqliteStorage();
  assertEquals(migrate(new SessionDb(storage)), true);
  const counted = counting(storage);
  const db = new SessionDb(counted.storage);
  assertEquals(migrate(db), false);
  assertEquals(counted.statements, [
    `SELECT name FROM sqlite_master WHERE type = 'table'`,
    `SELECT version FROM schema_version WHERE id = 1`,
  ]);
  // The table names read serve the lazy groups' questions: no read of its own.
  for (const table of LAZY_TABLES) assertEquals(db.hasTable(table), false);
  assertEquals(counted.statements.length, 2);
});

Deno.test("migrate() creates a fresh database in one schema statement after one read, none failing", () => {
  const counted = counting(sqliteStorage());
  const db = new SessionDb(counted.storage);
  assertEquals(migrate(db), true);
  assertEquals(counted.statements.length, 2, counted.statements.join("\n---\n"));
  assertEquals(counted.failed, []);
  assertEquals(db.rows(`SELECT version FROM schema_version`)[0].version, SCHEMA_VERSION);
});

Deno.test("migrate() leaves out of a fresh database every lazy table group", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  for (const table of LAZY_TABLES) {
    assertEquals(db.rows(`SELECT name FROM sqlite_master WHERE name = ?`, table.name), []);
    assertEquals(db.hasTable(table), false);
  }
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

Deno.test("migrate() stores run events in their key's b-tree (one row written per event) and keeps a migrated database's events", () => {
  const fresh = new SessionDb(sqliteStorage());
  migrate(fresh);
  const storage = sqliteStorage();
  storage.db.exec(
    `CREATE TABLE run_events (seq INTEGER NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL,
     data TEXT NOT NULL, PRIMARY KEY (seq, idx));
     INSERT INTO run_events (seq, idx, type, data) VALUES (4, 0, 'run.started', '{}'),
       (4, 1, 'run.completed', '{"reply":"hi"}')`,
  );
  const migrated = new SessionDb(storage);
  migrate(migrated);
  for (const db of [fresh, migrated]) {
    assertEquals(db.rows(`SELECT wr FROM pragma_table_list('run_events')`)[0].wr, 1);
  }
  assertEquals(
    migrated.rows(`SELECT seq, idx, type, data, at FROM run_events ORDER BY idx`)
      .map((row) => ({ ...row })),
    [
      { seq: 4, idx: 0, type: "run.started", data: "{}", at: null },
      { seq: 4, idx: 1, type: "run.completed", data: '{"reply":"hi"}', at: null },
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

/** Tables, their columns and indexes, as SQLite describes them. */
function shape(db: SessionDb): unknown {
  const objects = db.rows(
    `SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`,
  ).map((row) => ({ ...row }));
  const columns = objects.filter((o) => o.type === "table").map((o) => ({
    table: o.name,
    // A rowid table and a WITHOUT ROWID one list the same columns and key index.
    withoutRowid: db.rows(`SELECT wr FROM pragma_table_list(?)`, String(o.name))[0]?.wr,
    columns: db.rows(
      `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`,
      String(o.name),
    )
      .map((row) => ({ ...row })),
  }));
  // Every index of every table, the automatic ones of UNIQUE and PRIMARY KEY constraints too.
  const indexLists = objects.filter((o) => o.type === "table").map((o) => ({
    table: o.name,
    indexes: db.rows(
      `SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`,
      String(o.name),
    ).map((row) => ({ ...row })),
  }));
  const indexes = objects.filter((o) => o.type === "index").map((o) => ({
    index: o.name,
    columns: db.rows(`SELECT name FROM pragma_index_info(?)`, String(o.name)).map((r) => r.name),
    partial: db.rows(
      `SELECT partial FROM pragma_index_list(?) WHERE name = ?`,
      String(o.tbl_name),
      String(o.name),
    )
      .map((r) => r.partial),
  }));
  return { objects, columns, indexes, indexLists };
}

/** A database of the first release, brought to this version through every migration. */
function migratedFromFirstRelease(old = sqliteStorage()): SessionDb {
  old.db.exec(
    `CREATE TABLE outbox (seq INTEGER NOT NULL, part INTEGER NOT NULL, count INTEGER NOT NULL,
     text TEXT NOT NULL, sent_at INTEGER, error TEXT, PRIMARY KEY (seq, part))`,
  );
  const migrated = new SessionDb(old);
  migrate(migrated);
  return migrated;
}

Deno.test("migrate() makes the same schema on a fresh database, its lazy tables created, as through every migration", () => {
  const fresh = new SessionDb(sqliteStorage());
  migrate(fresh);
  fresh.transaction((tx) => {
    for (const table of LAZY_TABLES) fresh.ensureTable(tx, table);
  });
  assertEquals(shape(fresh), shape(migratedFromFirstRelease()));
});

Deno.test("migrate() makes on a fresh database the migrated schema without its lazy tables", () => {
  const fresh = new SessionDb(sqliteStorage());
  migrate(fresh);
  const migrated = migratedFromFirstRelease();
  // The lazy groups' tables and indexes dropped from the migrated database: the rest must match.
  for (const table of LAZY_TABLES) {
    for (const statement of table.schema) {
      const name = /^CREATE (?:TABLE|INDEX) (?:IF NOT EXISTS )?(\w+)/.exec(statement)![1];
      if (statement.startsWith("CREATE TABLE")) migrated.rows(`DROP TABLE ${name}`);
    }
  }
  assertEquals(shape(fresh), shape(migrated));
});

Deno.test("migrate() leaves every lazy group in a migrated database, seen by a new instance", () => {
  const storage = sqliteStorage();
  migratedFromFirstRelease(storage);
  const again = new SessionDb(storage);
  migrate(again);
  for (const table of LAZY_TABLES) assertEquals(again.hasTable(table), true);
});

Deno.test("migrate() keeps the grants made before members were recorded, as grants for every member", () => {
  const storage = sqliteStorage();
  storage.db.exec(
    `CREATE TABLE outbox (seq INTEGER NOT NULL, part INTEGER NOT NULL, count INTEGER NOT NULL,
     text TEXT NOT NULL, sent_at INTEGER, error TEXT, PRIMARY KEY (seq, part))`,
  );
  // A grant stored by a build of the version before, just as its table is rebuilt with members.
  const sql = {
    exec: (query: string, ...bindings: SqlValue[]) => {
      if (query.startsWith("INSERT INTO approval_grant_v2")) {
        storage.sql.exec(
          `INSERT INTO approval_grant (tool, scope, conversation) VALUES ('act', 'always', 3)`,
        );
      }
      return storage.sql.exec(query, ...bindings);
    },
  };
  const db = new SessionDb({ ...storage, sql });
  migrate(db);
  assertEquals(
    db.rows(`SELECT tool, scope, conversation, member FROM approval_grant`).map((r) => ({ ...r })),
    [{ tool: "act", scope: "always", conversation: 3, member: "" }],
  );
});

// Unit tests for lib/session/lazy_tables.ts and the stores that create their tables on first use, over node:sqlite; Deno.
import { assertEquals, assertThrows } from "@std/assert";
import { APPROVAL_TABLES, ApprovalStore } from "./approvals.ts";
import { JOB_TABLES, JobStore } from "./jobs.ts";
import { migrate, SEEN_DELIVERIES_SCHEMA } from "./schema.ts";
import { SeenDeliveryStore } from "./seen_deliveries.ts";
import { SessionDb } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** A new session's database, and whether `name` is a table in it (read from SQLite itself). */
function freshDb(): { db: SessionDb; exists: (name: string) => boolean } {
  const storage = sqliteStorage();
  const db = new SessionDb(storage);
  migrate(db);
  const exists = (name: string) =>
    storage.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).all(name)
      .length > 0;
  return { db, exists };
}

const _pause = {
  seq: 1,
  messages: [],
  step: 0,
  usage: { prompt_tokens: 0, completion_tokens: 0 },
  askedBy: "u1",
  deadline: 99,
};

Deno.test("ApprovalStore reads and ends nothing on a new session without creating its tables", () => {
  const { db, exists } = freshDb();
  const approvals = new ApprovalStore(db);
  assertEquals(approvals.paused(1), null);
  assertEquals(approvals.grants(0, "u1"), []);
  db.transaction((tx) => approvals.end(tx, 1));
  assertEquals(exists("approval_pause"), false);
});

Deno.test("ApprovalStore.pause() creates every approval table on a session's first pause", () => {
  const { db, exists } = freshDb();
  const approvals = new ApprovalStore(db);
  db.transaction((tx) =>
    approvals.pause(tx, _pause, [{ call_id: "c1", tool: "act", arguments: "{}" }], 5)
  );
  for (const name of ["approval_pause", "approval", "approval_grant", "approval_run"]) {
    assertEquals(exists(name), true, name);
  }
  assertEquals(approvals.pending(1)?.callId, "c1");
});

Deno.test("JobStore.add() creates the job tables on a session's first job; before, none is live", () => {
  const { db, exists } = freshDb();
  const jobs = new JobStore(db);
  assertEquals(jobs.liveCount(), 0);
  db.transaction((tx) => jobs.prune(tx));
  assertEquals(exists("job"), false);
  const id = db.transaction((tx) =>
    jobs.add(tx, {
      prompt: "hi",
      schedule: { kind: "once", at: 10 } as never,
      nextRunAt: 10,
      createdAt: 1,
      target: null,
      context: {},
    })
  );
  assertEquals(exists("job_run"), true);
  assertEquals(jobs.get(id)?.prompt, "hi");
  assertEquals(db.hasTable(JOB_TABLES), true);
});

Deno.test("LazyTables forgets a group created in a transaction that rolled back, and creates it again", () => {
  const { db, exists } = freshDb();
  const approvals = new ApprovalStore(db);
  assertThrows(() =>
    db.transaction((tx) => {
      approvals.pause(tx, _pause, [], 5);
      throw new Error("the write after failed");
    })
  );
  assertEquals(exists("approval_pause"), false);
  assertEquals(db.hasTable(APPROVAL_TABLES), false);
  assertEquals(approvals.paused(1), null); // no "no such table"
  db.transaction((tx) => approvals.pause(tx, _pause, [], 5));
  assertEquals(approvals.paused(1)?.askedBy, "u1");
});

Deno.test("SeenDeliveryStore asks nothing of SQLite on a session that never kept a key past the inbox's day", () => {
  const storage = sqliteStorage();
  const db = new SessionDb(storage);
  migrate(db);
  const seen = new SeenDeliveryStore(db);
  const statements: string[] = [];
  const exec = storage.sql.exec;
  storage.sql.exec = (query, ...bindings) => {
    statements.push(query);
    return exec(query, ...bindings);
  };
  assertEquals(seen.has("k1", 10), false);
  db.transaction((tx) => seen.prune(tx, 10));
  assertEquals(statements.filter((s) => s.includes("seen_delivery")), []);
  db.transaction((tx) => seen.remember(tx, "k1", 10, 1_000));
  assertEquals(seen.has("k1", 20), true);
  assertEquals(seen.has("k1", 2_000), false);
});

Deno.test("migrate() on an erased session's storage knows the delivery keys it kept (seen_delivery alone)", () => {
  const storage = sqliteStorage();
  for (const statement of SEEN_DELIVERIES_SCHEMA) storage.db.exec(statement);
  storage.db.exec(`INSERT INTO seen_delivery (key, seen_at, forget_at) VALUES ('k1', 1, 1000)`);
  const db = new SessionDb(storage);
  assertEquals(migrate(db), true);
  assertEquals(new SeenDeliveryStore(db).has("k1", 10), true);
});

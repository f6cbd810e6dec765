// Test support: node:sqlite standing in for Durable Object SQLite storage, with recorded alarms; Deno and Node (tests only).
import { DatabaseSync } from "node:sqlite";
import type { SessionStorage } from "./session_db.ts";

/** A `SessionStorage` over an in-memory (or given) node:sqlite database; `alarms` records every setAlarm. */
export function sqliteStorage(
  db: DatabaseSync = new DatabaseSync(":memory:"),
): SessionStorage & { db: DatabaseSync; alarms: number[] } {
  const alarms: number[] = [];
  return {
    db,
    alarms,
    sql: {
      exec: (query, ...bindings) => {
        const rows = db.prepare(query).all(...bindings) as Record<string, unknown>[];
        return { toArray: () => rows };
      },
    },
    transactionSync<T>(fn: () => T): T {
      db.exec("BEGIN");
      try {
        const out = fn();
        db.exec("COMMIT");
        return out;
      } catch (e) {
        db.exec("ROLLBACK");
        throw e;
      }
    },
    setAlarm(time) {
      alarms.push(time);
      return Promise.resolve();
    },
  };
}

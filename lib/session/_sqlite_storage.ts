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
        // As Durable Object SQLite does: statements joined by semicolons all run, the bindings
        // go to the last, whose rows are returned (node:sqlite's prepare would run the first only).
        const statements = _split(query);
        if (statements.length > 1) db.exec(statements.slice(0, -1).join(";\n"));
        const last = statements.at(-1) ?? query;
        const rows = db.prepare(last).all(...bindings) as Record<string, unknown>[];
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

/** `query`'s statements: split at semicolons outside quotes (enough for the SQL this project writes). */
function _split(query: string): string[] {
  const out: string[] = [];
  let quote: string | null = null, start = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === ";") out.push(query.slice(start, i)), start = i + 1;
  }
  out.push(query.slice(start));
  return out.filter((s) => s.trim() !== "");
}

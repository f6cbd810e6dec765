// Unit tests for the rows a turn writes (issue 32): the inbox's indexes, each one an index entry per status change; Deno.
import { assertEquals } from "@std/assert";
import { InboxStore } from "./inbox.ts";
import { migrate } from "./schema.ts";
import { SessionDb } from "./session_db.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import type { InboundMessage } from "./types.ts";

/** The inbox's indexes by name (the delivery key's unique index aside: a constraint, not a choice). */
function inboxIndexes(db: SessionDb): string[] {
  return db.rows(
    `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'inbox'
       AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name`,
  ).map((row) => String(row.name));
}

const _message = (text: string, requestHash?: string): InboundMessage =>
  ({ text, context: {}, ...(requestHash ? { requestHash } : {}) }) as InboundMessage;

Deno.test("migrate() gives the inbox only the indexes a turn's reads need (each costs a row written per change)", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  assertEquals(inboxIndexes(db), ["inbox_failed", "inbox_status"]);
});

Deno.test("InboxStore.recentFailure() finds the newest failed turn of a request, not a completed one or an old one", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const inbox = new InboxStore(db);
  const end = (seq: number, status: "completed" | "failed", at: number) =>
    db.transaction((tx) =>
      inbox.finish(
        tx,
        seq,
        status === "completed"
          ? { status, reply: "ok", usage: { prompt_tokens: 0, completion_tokens: 0 } }
          : { status, error: { type: "model_error", message: "no" } },
        at,
      )
    );
  const seqs = [1, 2, 3, 4].map((n) =>
    db.transaction((tx) =>
      inbox.insert(tx, _message(`m${n}`, n === 4 ? "other" : "h"), 10, "queued")
    )
  );
  end(seqs[0], "failed", 100);
  end(seqs[1], "failed", 500);
  end(seqs[2], "completed", 600);
  end(seqs[3], "failed", 700);
  assertEquals(inbox.recentFailure("h", 400), seqs[1]);
  assertEquals(inbox.recentFailure("h", 550), null);
  assertEquals(inbox.recentFailure("other", 0), seqs[3]);
  assertEquals(inbox.recentFailure("none", 0), null);
});

// Unit tests of an access object's notice outbox (lib/access/notice_outbox.ts): stored, sent once, 429s waited out, a cut-off send resolved, throttles taken back; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { DatabaseSync } from "node:sqlite";
import { type InDoubt, type ReplyChannel, RESEND_NOTE, type SendResult } from "../chat/mod.ts";
import { sqliteStorage } from "../session/_sqlite_storage.ts";
import { outboxTable } from "../session/outbox.ts";
import { migrate } from "../session/schema.ts";
import { SessionDb } from "../session/session_db.ts";
import { holdsNotices, NoticeOutbox, type NoticeUndo } from "./notice_outbox.ts";

const target = { platform: "test", chat: "c1" };

/** A channel answering each send with the next of `answers` (then ok), recording the texts sent. */
function channel(answers: SendResult[] = [], inDoubt: InDoubt = "resend_marked") {
  const sent: string[] = [];
  const ch: ReplyChannel = {
    split: (_t, text) => [text],
    send: (_t, text, part) => {
      part.leaving?.();
      sent.push(text);
      return Promise.resolve(answers.shift() ?? { ok: true });
    },
    inDoubt: () => Promise.resolve(inDoubt),
  };
  return { ch, sent };
}

function outbox(
  ch: ReplyChannel,
  storage = sqliteStorage(),
  givenUp: NoticeUndo[][] = [],
): { notices: NoticeOutbox; storage: ReturnType<typeof sqliteStorage>; givenUp: NoticeUndo[][] } {
  const notices = new NoticeOutbox(storage, {
    channel: ch,
    maxSendWaitMs: 1_000,
    leaseMs: 30_000,
    givenUp: (undo) => (givenUp.push(undo), Promise.resolve()),
    now: Date.now,
  });
  return { notices, storage, givenUp };
}

Deno.test("NoticeOutbox.queue() stores the notice, arms the watchdog and sends it once", async () => {
  const { ch, sent } = channel();
  const { notices, storage } = outbox(ch);
  assert(!holdsNotices(sqliteStorage().sql), "no table, no notice");
  notices.queue(target, "Your code: X", [{ kind: "refusal" }]);
  assert(holdsNotices(storage.sql));
  assertStrictEquals(storage.alarms.length, 1);
  await notices.flush();
  await notices.alarm(); // the watchdog finds nothing left
  assertEquals(sent, ["Your code: X"]);
  const [row] = storage.db.prepare(`SELECT sent_at, attempted_at, error FROM outbox`).all();
  assert(row.sent_at !== null && row.attempted_at !== null && row.error === null);
});

Deno.test("NoticeOutbox waits out a 429 and sends the notice again", async () => {
  const { ch, sent } = channel([
    { ok: false, status: 429, retryable: true, retryAfterMs: 20, message: "slow down" },
  ]);
  const { notices, givenUp } = outbox(ch);
  notices.queue(target, "This bot is private.", [{ kind: "refusal" }]);
  await notices.flush();
  assertEquals(sent, ["This bot is private.", "This bot is private."]);
  assertEquals(givenUp, []);
});

Deno.test("NoticeOutbox gives up a notice the platform refuses for good and takes back its throttles", async () => {
  const { ch, sent } = channel([
    { ok: false, status: 403, retryable: false, message: "blocked by the user" },
  ]);
  const { notices, givenUp } = outbox(ch);
  const undo: NoticeUndo[] = [{ kind: "quota" }, { kind: "group", object: "notice:telegram:-1" }];
  notices.queue(target, "Over the limit.", undo);
  await notices.flush();
  assertEquals(sent, ["Over the limit."]);
  assertEquals(givenUp, [undo]);
});

Deno.test("NoticeOutbox.alarm() after a kill resends the notice in doubt behind the note, or leaves it with REPLY_IN_DOUBT=skip", async () => {
  for (
    const [way, expected] of [["resend_marked", [`${RESEND_NOTE}Code`]], ["skip", []]] as const
  ) {
    const db = new DatabaseSync(":memory:");
    // The first runtime: the send leaves (attempted_at stored) and never comes back.
    const cut: ReplyChannel = {
      split: (_t, text) => [text],
      send: (_t, _text, part) => (part.leaving?.(), new Promise(() => {})),
      inDoubt: () => Promise.resolve(way),
    };
    outbox(cut, sqliteStorage(db)).notices.queue(target, "Code", []);
    await new Promise((r) => setTimeout(r, 10));
    // The restart: a new instance on the same storage, woken by its alarm.
    const { ch, sent } = channel([], way);
    const { notices, givenUp } = outbox(ch, sqliteStorage(db));
    await notices.alarm();
    assertEquals(sent, [...expected]);
    assertEquals(givenUp, [], "in doubt is not given up: it may have arrived");
    const [row] = db.prepare(`SELECT sent_at, error FROM outbox`).all();
    assert(way === "skip" ? row.error !== null : row.sent_at !== null, JSON.stringify(row));
  }
});

Deno.test("NoticeOutbox's table has every column of the session's outbox, and an older table gains the missing ones", () => {
  const columns = (storage: ReturnType<typeof sqliteStorage>) =>
    storage.sql.exec(`PRAGMA table_info(outbox)`).toArray().map((row) => String(row.name));
  const session = sqliteStorage();
  migrate(new SessionDb(session));
  const { storage } = outbox(channel().ch);
  const missing = columns(session).filter((name) => !columns(storage).includes(name));
  assertEquals(missing, [], "columns the session's outbox has and a notice outbox lacks");
  // An access object made before the `media` column: its table is brought up to date.
  const older = sqliteStorage();
  older.sql.exec(outboxTable("outbox"));
  for (const column of ["choices", "replaces", "undo"]) {
    older.sql.exec(`ALTER TABLE outbox ADD COLUMN ${column} TEXT`);
  }
  outbox(channel().ch, older);
  assert(columns(older).includes("media"), columns(older).join());
});

// An access object's outbox: the notices the webhook gate answers with (pairing codes, "private", over quota, /pair answers), stored and then sent once by the session's outbox sender; runtime-neutral.
import type { ReplyChannel, ReplyTarget } from "../chat/mod.ts";
import { OutboxStore, outboxTable } from "../session/outbox.ts";
import { OutboxSender } from "../session/outbox_sender.ts";
import { num, SessionDb, type SessionStorage } from "../session/session_db.ts";
import { errorText, log } from "../runtime/mod.ts";

/** A notice throttle of an access record (see `noticeFailed`). */
export type NoticeKind = "refusal" | "quota" | "group" | "budget";

/**
 * A throttle a notice counted as sent, to take back when the notice is given up (so that the
 * sender's next message tries again): its kind, in this object or in the one `object` names (a
 * group chat's `notice:<session key>`).
 */
export interface NoticeUndo {
  kind: NoticeKind;
  object?: string;
}

/** What the outbox needs from its object. */
export interface NoticeOutboxOptions {
  channel: ReplyChannel;
  /** How long a send waits out 429s and retries before it is given up (a session's default: 2 min). */
  maxSendWaitMs?: number;
  /**
   * How long a notice may go unsent before the alarm takes it up: the watchdog that finds a send a
   * killed runtime left in doubt (`TURN_LEASE_MS`, as a session's turn).
   */
  leaseMs: number;
  /** A notice was given up: take back the throttles it counted. */
  givenUp(undo: NoticeUndo[]): Promise<void>;
  now(): number;
}

/**
 * The columns the session's outbox gained after the table schema 2 made (lib/session/schema.ts:
 * `choices`, `replaces`, `media`), plus `undo`, the throttles a notice counted. The outbox store
 * writes them all, so an access object's table must have each: a column added to the session's
 * outbox later belongs here too (`notice_outbox_test.ts` compares the two tables).
 */
const _ADDED_COLUMNS = ["choices", "replaces", "media", "undo"] as const;

/**
 * Creates the `outbox` table as the session's stands, and the index unsent notices are read by,
 * with the first notice (most access objects never send one); adds any column an older access
 * object's table lacks. The statements run together, with no await between: one implicit
 * transaction.
 */
function _createOutbox(sql: SessionStorage["sql"]): void {
  if (!_hasOutbox(sql)) {
    sql.exec(outboxTable("outbox"));
    sql.exec(`CREATE INDEX outbox_unsent ON outbox (kind, sent_at, error, id)`);
  }
  const present = new Set(
    sql.exec(`PRAGMA table_info(outbox)`).toArray().map((row) => String(row.name)),
  );
  for (const column of _ADDED_COLUMNS) {
    if (!present.has(column)) sql.exec(`ALTER TABLE outbox ADD COLUMN ${column} TEXT`);
  }
}

function _hasOutbox(sql: SessionStorage["sql"]): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'`)
    .toArray().length > 0;
}

/** Whether an object's SQLite holds any notice (an erasure's answer), without creating the table. */
export function holdsNotices(sql: SessionStorage["sql"]): boolean {
  return _hasOutbox(sql) && sql.exec(`SELECT 1 FROM outbox LIMIT 1`).toArray().length > 0;
}

/** Settled notices are kept this long (the inspector's and a support request's view), then pruned. */
const _KEEP_MS = 24 * 60 * 60 * 1000;
const _MAX_SEND_WAIT_MS = 120_000;

/**
 * The notices of one access object (a sender's record, a chat's notice throttle). `queue` stores
 * one durably and starts its send; the send is the session's: `attempted_at` stored as the request
 * leaves, 429s waited out, a part cut off resolved after a restart the way its platform allows
 * (found, resent, resent behind `RESEND_NOTE`, or left with `REPLY_IN_DOUBT=skip`). The alarm is
 * the watchdog that takes up what a killed runtime left.
 */
export class NoticeOutbox {
  readonly #db: SessionDb;
  readonly #outbox: OutboxStore;
  readonly #sender: OutboxSender;
  readonly #options: NoticeOutboxOptions;
  #flushing: Promise<void> | null = null;

  constructor(storage: SessionStorage, options: NoticeOutboxOptions) {
    _createOutbox(storage.sql);
    this.#db = new SessionDb(storage);
    this.#outbox = new OutboxStore(this.#db);
    this.#sender = new OutboxSender(this.#db, this.#outbox, {
      channel: options.channel,
      maxSendWaitMs: options.maxSendWaitMs ?? _MAX_SEND_WAIT_MS,
      previews: false,
      now: options.now,
    });
    this.#options = options;
  }

  /**
   * Stores `text` for `target` (split as its platform needs) with the throttles it counted, arms
   * the watchdog, and starts the send without waiting for it: the caller acknowledges its delivery
   * once this has returned (the write is durable before its answer leaves the object).
   */
  queue(target: ReplyTarget, text: string, undo: readonly NoticeUndo[]): void {
    const now = this.#options.now();
    this.#db.transaction((tx) => {
      this.#outbox.prune(tx, [], now - _KEEP_MS);
      const [last] = this.#db.rows(`SELECT COALESCE(MAX(id), 0) AS id FROM outbox`);
      this.#outbox.add(tx, "notice", null, target, this.#sender.split(target, text), now);
      if (undo.length) {
        this.#db.exec(
          tx,
          `UPDATE outbox SET undo = ? WHERE id > ?`,
          JSON.stringify(undo),
          num(last, "id"),
        );
      }
    });
    this.#db.armAlarm(now + this.#options.leaseMs);
    this.flush().catch((error) => log.error("notice not sent", { error: errorText(error) }));
  }

  /**
   * The alarm: sends what is still unsent (a killed runtime's part in doubt among it), watched
   * again a lease on while it lasts.
   */
  async alarm(): Promise<void> {
    this.#db.alarmFired();
    if (!this.#outbox.unsentNotices().length) return;
    this.#db.armAlarm(this.#options.now() + this.#options.leaseMs);
    await this.flush();
  }

  /** Sends every unsent notice, oldest first; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  /** Closes this handle before its object's storage is erased: a send in flight records nothing. */
  close(): void {
    this.#db.close();
  }

  async #flush(): Promise<void> {
    for (let parts = this.#outbox.unsentNotices(); parts.length;) {
      for (const part of parts) {
        if (!part.target) {
          // Never stored without one; were it, it could never leave: settled, not retried forever.
          this.#db.transaction((tx) =>
            this.#outbox.markDone(tx, part.id, "no reply target", this.#options.now())
          );
          continue;
        }
        if ((await this.#sender.send(part, part.target)) === "failed") {
          await this.#options.givenUp(this.#undo(part.id));
        }
      }
      parts = this.#outbox.unsentNotices();
    }
  }

  #undo(id: number): NoticeUndo[] {
    const [row] = this.#db.rows(`SELECT undo FROM outbox WHERE id = ?`, id);
    return row?.undo ? JSON.parse(String(row.undo)) as NoticeUndo[] : [];
  }
}

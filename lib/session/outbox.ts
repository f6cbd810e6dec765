// The session's outbox: every text a chat user gets (reply parts and notices), with its send record; runtime-neutral.
import type { Choice, ReplyTarget } from "../chat/mod.ts";
import type { MediaRef } from "../media/mod.ts";
import { json, num, numOrNull, type SessionDb, str, type Tx } from "./session_db.ts";

/**
 * The statement that creates the outbox under `name` as schema 2 made it: reply parts and notices,
 * each with its target and send record. Later columns (`choices`, `replaces`) come by ALTER in
 * schema.ts's migrations, so this text is part of migration 1 → 2 and must never change.
 */
export function outboxTable(name: string): string {
  return `CREATE TABLE ${name} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER,
    kind TEXT NOT NULL DEFAULT 'reply',
    part INTEGER NOT NULL,
    count INTEGER NOT NULL,
    text TEXT NOT NULL,
    target TEXT,
    created_at INTEGER NOT NULL DEFAULT 0,
    attempted_at INTEGER,
    sent_at INTEGER,
    error TEXT
  )`;
}

/**
 * A reply part may be a file (a tool's, stored in `MEDIA`): its reference, JSON in `media`. The
 * bytes stay in the store; the part is sent, recorded and resolved in doubt like a text part.
 */
export const OUTBOX_MEDIA_SCHEMA: readonly string[] = [`ALTER TABLE outbox ADD COLUMN media TEXT`];

/** One text to send: a part of a turn's reply, or a notice (a command's answer, queued, queue full). */
export interface OutboxPart {
  id: number;
  /** The message it answers; null for a notice about a message that was not stored (queue full). */
  seq: number | null;
  kind: "reply" | "notice";
  index: number;
  count: number;
  text: string;
  /** Where it goes; null for reply parts stored before schema 2 (their message's reply target). */
  target: ReplyTarget | null;
  /** Set once a send of it left; with no `sentAt`, nobody knows whether it arrived. */
  attemptedAt: number | null;
  /**
   * Names this part where the platform can carry a name (a GitHub comment marker, Slack metadata):
   * the row id, unique in the session, and its creation time, so that no other session's part
   * in the same chat can share it even if a session's rows were ever renumbered.
   */
  marker: string;
  /** Buttons sent with this part (the last part of an approval question), or null. */
  choices: Choice[] | null;
  /** The preview message this part replaces (a reply's first part; see `PartSend.replaces`), or null. */
  replaces: string | null;
  /** The file this part sends (its `text` is then the caption, "" for none), or null for a text. */
  file: MediaRef | null;
}

/** A part's place in its text, as log lines and the run's timeline name it: "2/3". */
export function partLabel(part: Pick<OutboxPart, "index" | "count">): string {
  return `${part.index + 1}/${part.count}`;
}

/** A part with its send record: when it was stored and sent, or why it was given up. */
export interface OutboxRecord extends OutboxPart {
  createdAt: number;
  sentAt: number | null;
  error: string | null;
}

/** The `outbox` table. A part is sent at most once: `attempted_at` is stored before it leaves. */
export class OutboxStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /**
   * Adds the parts of message `seq`'s reply (again: ignored) or of a notice; `choices` go with
   * the last part, so the buttons sit under the whole text; `replaces`, a preview message that
   * the first text part replaces; `files`, files sent ahead of the text as parts of their own
   * (a reply's only: the text's parts follow them in the same numbering).
   */
  add(
    tx: Tx,
    kind: "reply" | "notice",
    seq: number | null,
    target: ReplyTarget,
    parts: string[],
    now: number,
    extras: {
      choices?: readonly Choice[];
      replaces?: string | null;
      files?: readonly MediaRef[];
    } = {},
  ): void {
    const choices = extras.choices ?? [];
    const files = extras.files ?? [];
    const count = files.length + parts.length;
    for (const [at, file] of files.entries()) {
      this.#db.exec(
        tx,
        `INSERT OR IGNORE INTO outbox (seq, kind, part, count, text, target, created_at, media)
         VALUES (?, ?, ?, ?, '', ?, ?, ?)`,
        seq,
        kind,
        at,
        count,
        JSON.stringify(target),
        now,
        JSON.stringify(file),
      );
    }
    for (const [i, text] of parts.entries()) {
      const last = i === parts.length - 1 && choices.length > 0;
      this.#db.exec(
        tx,
        `INSERT OR IGNORE INTO outbox
           (seq, kind, part, count, text, target, created_at, choices, replaces)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        seq,
        kind,
        files.length + i,
        count,
        text,
        JSON.stringify(target),
        now,
        last ? JSON.stringify(choices) : null,
        i === 0 ? extras.replaces ?? null : null,
      );
    }
  }

  /** The unsent reply parts of message `seq`, in order. */
  unsentReply(seq: number): OutboxPart[] {
    return this.#select(
      `WHERE kind = 'reply' AND seq = ? AND sent_at IS NULL AND error IS NULL ORDER BY part`,
      seq,
    );
  }

  /** Every unsent notice, oldest first. */
  unsentNotices(): OutboxPart[] {
    return this.#select(
      `WHERE kind = 'notice' AND sent_at IS NULL AND error IS NULL ORDER BY id`,
    );
  }

  /** Records that a send of part `id` leaves now (`true`), or that an answer said nothing was posted. */
  markAttempt(tx: Tx, id: number, leaving: boolean, now: number): void {
    this.#db.exec(tx, `UPDATE outbox SET attempted_at = ? WHERE id = ?`, leaving ? now : null, id);
  }

  /** The error of message `seq`'s last reply part that failed, or null. */
  replyError(seq: number): string | null {
    const row = this.#db.rows(
      `SELECT error FROM outbox WHERE seq = ? AND kind = 'reply' AND error IS NOT NULL
       ORDER BY part DESC LIMIT 1`,
      seq,
    )[0];
    return row ? String(row.error) : null;
  }

  /** Records part `id` as sent, or as given up with `error`. */
  markDone(tx: Tx, id: number, error: string | null, now: number): void {
    this.#db.exec(
      tx,
      `UPDATE outbox SET sent_at = ?, error = ? WHERE id = ?`,
      error ? null : now,
      error,
      id,
    );
  }

  /** The newest `limit` parts and notices, newest first, with their send record. */
  history(limit: number): OutboxRecord[] {
    return this.#select(`ORDER BY id DESC LIMIT ?`, limit);
  }

  /** Forgets the parts of pruned messages, and notices settled before `cutoff`. */
  prune(tx: Tx, seqs: number[], cutoff: number): void {
    for (const seq of seqs) this.#db.exec(tx, `DELETE FROM outbox WHERE seq = ?`, seq);
    this.#db.exec(
      tx,
      `DELETE FROM outbox WHERE kind = 'notice' AND created_at < ?
       AND (sent_at IS NOT NULL OR error IS NOT NULL)`,
      cutoff,
    );
  }

  #select(where: string, ...bindings: number[]): OutboxRecord[] {
    return this.#db.rows(
      `SELECT id, seq, kind, part, count, text, target, created_at, attempted_at, choices,
         replaces, sent_at, error, media
       FROM outbox ${where}`,
      ...bindings,
    ).map((row) => ({
      id: num(row, "id"),
      seq: numOrNull(row, "seq"),
      kind: str(row, "kind") === "notice" ? "notice" : "reply",
      index: num(row, "part"),
      count: num(row, "count"),
      text: str(row, "text"),
      target: json<ReplyTarget>(row, "target"),
      attemptedAt: numOrNull(row, "attempted_at"),
      marker: `o${num(row, "id")}-${num(row, "created_at").toString(36)}`,
      choices: json<Choice[]>(row, "choices"),
      replaces: typeof row.replaces === "string" ? row.replaces : null,
      file: typeof row.media === "string" ? json<MediaRef>(row, "media") : null,
      createdAt: num(row, "created_at"),
      sentAt: numOrNull(row, "sent_at"),
      error: row.error === null ? null : str(row, "error"),
    }));
  }
}

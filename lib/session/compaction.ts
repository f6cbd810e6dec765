// The session's compactions (summaries that stand for a conversation's oldest transcript messages) and its last model call's context size; runtime-neutral.
import type { InspectedCompaction } from "./inspection.ts";
import { num, type SessionDb, str, type Tx } from "./session_db.ts";

/**
 * The tables (appended as one migration in schema.ts). A compaction covers the transcript ids
 * `(from_id, through_id]` of its conversation; each starts where the one before it ended, and
 * UNIQUE (conversation, from_id) makes a second summary of the same range impossible, whatever
 * races. `context_size` is the newest measure of what a turn sent: the model's own count.
 */
export const COMPACTION_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS compaction (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      conversation INTEGER NOT NULL,
      from_id INTEGER NOT NULL,
      through_id INTEGER NOT NULL,
      messages INTEGER NOT NULL,
      summary TEXT NOT NULL,
      seq INTEGER,
      created_at INTEGER NOT NULL,
      UNIQUE (conversation, from_id),
      CHECK (through_id > from_id)
    )`,
  `CREATE TABLE IF NOT EXISTS context_size (
      conversation INTEGER PRIMARY KEY,
      tokens INTEGER NOT NULL,
      through_id INTEGER NOT NULL
    )`,
] as const;

/** One compaction as stored. */
export interface Compaction {
  id: number;
  conversation: number;
  /** The transcript ids it stands for: after `fromId`, through `throughId`. */
  fromId: number;
  throughId: number;
  /** How many transcript messages of the conversation it covers. */
  messages: number;
  /** The model's summary: what later turns see instead of those messages (and of earlier summaries). */
  summary: string;
  /** The message whose turn (or /compact) wrote it. */
  seq: number | null;
  createdAt: number;
}

/** The `compaction` and `context_size` tables. */
export class CompactionStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** The newest compaction of `conversation`, or null: its later turns see this summary first. */
  latest(conversation: number): Compaction | null {
    const row = this.#db.rows(
      `SELECT * FROM compaction WHERE conversation = ? ORDER BY through_id DESC LIMIT 1`,
      conversation,
    )[0];
    return row ? _compaction(row) : null;
  }

  /** Every compaction of `conversation`, oldest first (the inspector and the API's read). */
  list(conversation: number): Compaction[] {
    return this.#db.rows(
      `SELECT * FROM compaction WHERE conversation = ? ORDER BY through_id`,
      conversation,
    ).map(_compaction);
  }

  /**
   * Stores a summary of `(fromId, throughId]` if it still follows the newest one (nothing else
   * compacted meanwhile) and covers at least one message; returns whether it was stored. The
   * measure of the conversation is dropped: it counted what the summary now replaces.
   */
  add(
    tx: Tx,
    entry: { conversation: number; fromId: number; throughId: number; summary: string },
    seq: number | null,
    now: number,
  ): boolean {
    const { conversation, fromId, throughId, summary } = entry;
    if ((this.latest(conversation)?.throughId ?? 0) !== fromId) return false;
    const messages = num(
      this.#db.exec(
        tx,
        `SELECT count(*) AS n FROM transcript WHERE conversation = ? AND id > ? AND id <= ?`,
        conversation,
        fromId,
        throughId,
      )[0],
      "n",
    );
    if (messages === 0) return false;
    this.#db.exec(
      tx,
      `INSERT INTO compaction (conversation, from_id, through_id, messages, summary, seq, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      conversation,
      fromId,
      throughId,
      messages,
      summary,
      seq,
      now,
    );
    this.#db.exec(tx, `DELETE FROM context_size WHERE conversation = ?`, conversation);
    return true;
  }

  /**
   * Remembers the context size of `conversation`'s last model call (its prompt and completion
   * tokens), as of transcript id `throughId`: what a later turn sends is that plus what is newer.
   */
  measure(tx: Tx, conversation: number, tokens: number): void {
    const through = num(
      this.#db.exec(
        tx,
        `SELECT coalesce(max(id), 0) AS id FROM transcript WHERE conversation = ?`,
        conversation,
      )[0],
      "id",
    );
    this.#db.exec(
      tx,
      `INSERT INTO context_size (conversation, tokens, through_id) VALUES (?, ?, ?)
       ON CONFLICT (conversation) DO UPDATE SET tokens = excluded.tokens,
       through_id = excluded.through_id`,
      conversation,
      tokens,
      through,
    );
  }

  /** The last measure of `conversation`, or null (none yet, or a compaction since). */
  measured(conversation: number): { tokens: number; throughId: number } | null {
    const row = this.#db.rows(
      `SELECT tokens, through_id FROM context_size WHERE conversation = ?`,
      conversation,
    )[0];
    return row ? { tokens: num(row, "tokens"), throughId: num(row, "through_id") } : null;
  }

  /** `list(conversation)` as the inspector and `GET /v1/sessions/{key}` show it. */
  inspect(conversation: number): InspectedCompaction[] {
    return this.list(conversation).map((c) => ({
      summary: c.summary,
      ...this.positions(c),
      messages: c.messages,
      seq: c.seq,
      created_at: c.createdAt,
    }));
  }

  /** The 0-based positions of transcript ids `(fromId, throughId]` among `conversation`'s messages. */
  positions(c: Compaction): { from: number; through: number } {
    const before = num(
      this.#db.rows(
        `SELECT count(*) AS n FROM transcript WHERE conversation = ? AND id <= ?`,
        c.conversation,
        c.fromId,
      )[0],
      "n",
    );
    return { from: before, through: before + c.messages - 1 };
  }
}

function _compaction(row: Record<string, unknown>): Compaction {
  return {
    id: num(row, "id"),
    conversation: num(row, "conversation"),
    fromId: num(row, "from_id"),
    throughId: num(row, "through_id"),
    messages: num(row, "messages"),
    summary: str(row, "summary"),
    seq: typeof row.seq === "number" ? row.seq : null,
    createdAt: num(row, "created_at"),
  };
}

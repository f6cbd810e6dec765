// The session's outbound events (turn.completed, turn.failed, approval.requested, job.failed) as outbox rows, written in the transaction that makes them true; runtime-neutral.
import type { LazyTable } from "./lazy_tables.ts";
import { num, numOrNull, type SessionDb, str, type Tx } from "./session_db.ts";

/**
 * The `event_outbox` table. `dedup` names what the event is about (`turn:<seq>`,
 * `approval:<seq>:<call id>`, `job:<seq>`): a second write of one is ignored, so an event is
 * never doubled. `webhook_id` is drawn once, when the row is written: every retry sends it again.
 */
export const EVENT_OUTBOX_SCHEMA: readonly string[] = [
  `CREATE TABLE event_outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      dedup TEXT NOT NULL UNIQUE,
      webhook_id TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      sent_at INTEGER,
      error TEXT
    )`,
  `CREATE INDEX event_outbox_unsent ON event_outbox (sent_at, error, id)`,
];

/** The event outbox, created with a session's first event (only EVENTS_WEBHOOK_URL writes any). */
export const EVENT_OUTBOX_TABLES: LazyTable = { name: "event_outbox", schema: EVENT_OUTBOX_SCHEMA };

/** An event's type. */
export type OutboundEventType =
  | "turn.completed"
  | "turn.failed"
  | "approval.requested"
  | "job.failed";

/** One stored event: the body is the payload as sent, `{type, timestamp, data}` (JSON text). */
export interface StoredEvent {
  id: number;
  webhookId: string;
  body: string;
  attempts: number;
}

/** How long a sent (or given up) event is kept: the inbox's day. */
const _KEEP_MS = 24 * 60 * 60 * 1000;

/** The `event_outbox` table: events to post to `EVENTS_WEBHOOK_URL`, each with its send record. */
export class EventOutboxStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Stores event `type` about `dedup` (again: ignored); returns whether it was new. */
  add(
    tx: Tx,
    dedup: string,
    type: OutboundEventType,
    data: Record<string, unknown>,
    now: number,
  ): boolean {
    const body = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
    const webhookId = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
    this.#db.ensureTable(tx, EVENT_OUTBOX_TABLES);
    return this.#db.exec(
      tx,
      `INSERT OR IGNORE INTO event_outbox (dedup, webhook_id, body, created_at)
       VALUES (?, ?, ?, ?) RETURNING id`,
      dedup,
      webhookId,
      body,
      now,
    ).length > 0;
  }

  /** Every event not sent nor given up, oldest first. */
  unsent(): StoredEvent[] {
    if (!this.#db.hasTable(EVENT_OUTBOX_TABLES)) return [];
    return this.#db.rows(
      `SELECT id, webhook_id, body, attempts FROM event_outbox
       WHERE sent_at IS NULL AND error IS NULL ORDER BY id`,
    ).map((row) => ({
      id: num(row, "id"),
      webhookId: str(row, "webhook_id"),
      body: str(row, "body"),
      attempts: num(row, "attempts"),
    }));
  }

  /** Counts an attempt as it leaves (a crash after it still shows the event was tried). */
  countAttempt(tx: Tx, id: number): void {
    if (!this.#db.hasTable(EVENT_OUTBOX_TABLES)) return;
    this.#db.exec(tx, `UPDATE event_outbox SET attempts = attempts + 1 WHERE id = ?`, id);
  }

  /** Records event `id` as sent, or as given up with `error`; then forgets those older than a day. */
  markDone(tx: Tx, id: number, error: string | null, now: number): void {
    if (!this.#db.hasTable(EVENT_OUTBOX_TABLES)) return;
    this.#db.exec(
      tx,
      `UPDATE event_outbox SET sent_at = ?, error = ? WHERE id = ?`,
      error ? null : now,
      error,
      id,
    );
    this.#db.exec(
      tx,
      `DELETE FROM event_outbox WHERE created_at < ? AND (sent_at IS NOT NULL OR error IS NOT NULL)`,
      now - _KEEP_MS,
    );
  }

  /** Every event's record, newest first (tests, the inspector). */
  history(
    limit: number,
  ): { type: string; attempts: number; sentAt: number | null; error: string | null }[] {
    if (!this.#db.hasTable(EVENT_OUTBOX_TABLES)) return [];
    return this.#db.rows(
      `SELECT body, attempts, sent_at, error FROM event_outbox ORDER BY id DESC LIMIT ?`,
      limit,
    ).map((row) => ({
      type: String(JSON.parse(str(row, "body")).type),
      attempts: num(row, "attempts"),
      sentAt: numOrNull(row, "sent_at"),
      error: row.error === null ? null : str(row, "error"),
    }));
  }
}

// The session's long memory of delivery keys (keys and times only), for platforms that may deliver a signed message again after the inbox's day; runtime-neutral.
import type { LazyTable } from "./lazy_tables.ts";
import type { SessionDb, Tx } from "./session_db.ts";

/**
 * Delivery keys kept past the inbox's day (keys and times only): a platform that signs no delivery
 * time, or retries for a week, can deliver one signed message again after the inbox forgot it.
 */
export const SEEN_DELIVERIES_SCHEMA: readonly string[] = [
  // IF NOT EXISTS: an erased session keeps this table alone (`eraseSession`), and its next start
  // creates every other table as a fresh database does.
  `CREATE TABLE IF NOT EXISTS seen_delivery (
      key TEXT PRIMARY KEY,
      seen_at INTEGER NOT NULL,
      forget_at INTEGER NOT NULL
    ) WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS seen_delivery_forget ON seen_delivery (forget_at)`,
];

/**
 * The `seen_delivery` group (lazy_tables.ts): created by the first key kept past the inbox's day,
 * so a session whose platform never asks for that (Telegram, Slack, the API…) reads and prunes
 * nothing there, and a new session's schema has a table and an index fewer.
 */
export const SEEN_DELIVERY_TABLES: LazyTable = {
  name: "seen_delivery",
  schema: SEEN_DELIVERIES_SCHEMA,
};

/**
 * The `seen_delivery` table. The inbox remembers a delivery key for a day (`DEDUP_MS`) and then
 * prunes its row, but a signed delivery verifies as long as its secret holds: Twilio signs no time
 * at all, and Meta retries a WhatsApp notification for a week. A message whose platform says so
 * (`InboundMessage.keyMemoryMs`) leaves its key here for that long, a few dozen bytes a message.
 */
export class SeenDeliveryStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Whether `key` was delivered before and is still remembered at `now`. */
  has(key: string, now: number): boolean {
    if (!this.#db.hasTable(SEEN_DELIVERY_TABLES)) return false;
    return this.#db.rows(
      `SELECT 1 FROM seen_delivery WHERE key = ? AND forget_at > ?`,
      key,
      now,
    ).length > 0;
  }

  /** Remembers `key`, seen at `now`, for `keepMs` (a key seen again keeps the later end). */
  remember(tx: Tx, key: string, now: number, keepMs: number): void {
    this.#db.ensureTable(tx, SEEN_DELIVERY_TABLES);
    this.#db.exec(
      tx,
      `INSERT INTO seen_delivery (key, seen_at, forget_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET forget_at = max(forget_at, excluded.forget_at)`,
      key,
      now,
      now + keepMs,
    );
  }

  /** Forgets every key whose time is up. */
  prune(tx: Tx, now: number): void {
    if (!this.#db.hasTable(SEEN_DELIVERY_TABLES)) return;
    this.#db.exec(tx, `DELETE FROM seen_delivery WHERE forget_at <= ?`, now);
  }
}

// The session's long memory of delivery keys (keys and times only), for platforms that may deliver a signed message again after the inbox's day; runtime-neutral.
import type { SessionDb, Tx } from "./session_db.ts";

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
    return this.#db.rows(
      `SELECT 1 FROM seen_delivery WHERE key = ? AND forget_at > ?`,
      key,
      now,
    ).length > 0;
  }

  /** Remembers `key`, seen at `now`, for `keepMs` (a key seen again keeps the later end). */
  remember(tx: Tx, key: string, now: number, keepMs: number): void {
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
    this.#db.exec(tx, `DELETE FROM seen_delivery WHERE forget_at <= ?`, now);
  }
}

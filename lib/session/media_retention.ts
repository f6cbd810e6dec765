// A session's media past MEDIA_RETENTION_DAYS: a ledger of the keys it stored (when each was last stored) and the alarm's sweep that deletes the expired ones; runtime-neutral.
import type { MediaStore } from "../media/mod.ts";
import { errorText, log } from "../runtime/mod.ts";
import type { LazyTable } from "./lazy_tables.ts";
import type { SessionDb } from "./session_db.ts";

/**
 * The ledger: each key of the `MEDIA` store the session stored, with when it was last stored
 * (content-named keys are stored again when the same bytes come again: that restarts their time).
 */
export const MEDIA_OBJECT_SCHEMA: readonly string[] = [
  `CREATE TABLE media_object (key TEXT PRIMARY KEY, stored_at INTEGER NOT NULL)`,
  `CREATE INDEX media_object_stored ON media_object (stored_at)`,
];

/** The media ledger, created when a session first stores a medium: most sessions never do. */
export const MEDIA_OBJECT_TABLES: LazyTable = { name: "media_object", schema: MEDIA_OBJECT_SCHEMA };

/** What the sweep needs: the store, how long media are kept, and whether a turn holds the session. */
export interface MediaRetentionOptions {
  store: MediaStore;
  /** `MEDIA_RETENTION_DAYS` in milliseconds: a medium last stored longer ago than this is deleted. */
  retentionMs: number;
}

/** Keys deleted per sweep at most: an alarm stays short; the next alarm takes the rest. */
export const SWEEP_BATCH = 100;

/**
 * How long an expired medium that is still needed (a turn runs or waits for approval, a queued
 * message or an unsent reply part names it), or whose deletion failed, waits before it is looked
 * at again: soon enough, and never a busy loop of alarms.
 */
export const SWEEP_RECHECK_MS = 60 * 60_000;

/**
 * The session's media retention. Keys are noted as they are stored or claimed (a SQL upsert, no
 * I/O); the sweep runs only from the alarm, never on a message's path, and costs one indexed read
 * when nothing has expired. Media are deleted by retention and erasure only, never by `/new`: keys
 * are named by content and shared by every conversation of the session, and a job or a paused
 * approval's turn may still read them.
 */
export class MediaRetention {
  readonly #db: SessionDb;
  readonly #options: MediaRetentionOptions;
  /** Whether a turn holds the session now (running, or paused for approval). */
  readonly #busy: () => boolean;

  constructor(db: SessionDb, options: MediaRetentionOptions, busy: () => boolean) {
    this.#db = db;
    this.#options = options;
    this.#busy = busy;
  }

  /** Records that `keys` were stored (or sent again) at `now`. */
  note(keys: readonly string[], now: number): void {
    if (!keys.length) return;
    this.#db.transaction((tx) => {
      this.#db.ensureTable(tx, MEDIA_OBJECT_TABLES);
      for (const key of keys) {
        this.#db.exec(
          tx,
          `INSERT INTO media_object (key, stored_at) VALUES (?, ?)
           ON CONFLICT (key) DO UPDATE SET stored_at = MAX(stored_at, excluded.stored_at)`,
          key,
          now,
        );
      }
    });
  }

  /** When the oldest noted medium expires (the alarm's time for the next sweep); null: none noted. */
  nextDue(): number | null {
    if (!this.#db.hasTable(MEDIA_OBJECT_TABLES)) return null;
    const row = this.#db.rows(`SELECT MIN(stored_at) AS oldest FROM media_object`)[0];
    const oldest = row?.oldest;
    return typeof oldest === "number" ? oldest + this.#options.retentionMs : null;
  }

  /**
   * Deletes the media whose retention has ended (at most `SWEEP_BATCH`), from the store first,
   * then from the ledger. Spares, and looks at again later, those a turn holding the session, a
   * queued message or an unsent reply part may still need. Never throws: a store that fails is
   * logged and tried again later. Returns how many were deleted.
   */
  async sweep(now: number): Promise<number> {
    if (!this.#db.hasTable(MEDIA_OBJECT_TABLES)) return 0;
    const cutoff = now - this.#options.retentionMs;
    const due = this.#db.rows(
      `SELECT key FROM media_object WHERE stored_at <= ? ORDER BY stored_at LIMIT ?`,
      cutoff,
      SWEEP_BATCH,
    ).map((row) => String(row.key));
    if (!due.length) return 0;
    // A running or paused turn may read any medium of its history: nothing goes while one holds
    // the session (a pause lasts at most the approval timeout).
    const spared = this.#busy() ? due : due.filter((key) => this.#needed(key));
    this.#recheck(spared, cutoff);
    let deleted = 0;
    for (const key of due.filter((k) => !spared.includes(k))) {
      try {
        await this.#options.store.delete(key);
      } catch (error) {
        log.warn("expired media not deleted; retrying later", { error: errorText(error) });
        this.#recheck([key], cutoff);
        continue;
      }
      // Only if it was not stored again meanwhile (then it is kept from its new time).
      this.#db.transaction((tx) =>
        this.#db.exec(tx, `DELETE FROM media_object WHERE key = ? AND stored_at <= ?`, key, cutoff)
      );
      deleted++;
    }
    if (deleted) log.info("expired media deleted", { count: deleted });
    return deleted;
  }

  /** Whether a message not yet finished or a reply part not yet sent names `key`. */
  #needed(key: string): boolean {
    return this.#db.rows(
      `SELECT 1 FROM inbox WHERE finished_at IS NULL AND instr(message, ?) > 0
       UNION ALL
       SELECT 1 FROM outbox WHERE media IS NOT NULL AND sent_at IS NULL AND error IS NULL
         AND instr(media, ?) > 0
       LIMIT 1`,
      key,
      key,
    ).length > 0;
  }

  /** Moves `keys` so that they come due again `SWEEP_RECHECK_MS` from now. */
  #recheck(keys: readonly string[], cutoff: number): void {
    if (!keys.length) return;
    this.#db.transaction((tx) => {
      for (const key of keys) {
        this.#db.exec(
          tx,
          `UPDATE media_object SET stored_at = ? WHERE key = ? AND stored_at <= ?`,
          cutoff + SWEEP_RECHECK_MS,
          key,
          cutoff,
        );
      }
    });
  }
}

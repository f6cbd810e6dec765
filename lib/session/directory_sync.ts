// Keeps a session's directory row current: written after state changes, off the turn's path, retried until it lands; runtime-neutral.
import { errorText, log } from "../runtime/mod.ts";
import { type DirectoryEntry, directoryEntry, type DirectoryWriter } from "./directory_entry.ts";
import type { SessionStores } from "./session_stores.ts";

/** What a sync needs from its session. */
export interface DirectorySyncOptions {
  writer: DirectoryWriter;
  now: () => number;
  /** Makes sure the session's alarm fires by `time`, to retry a failed write (see `retry`). */
  armRetry: (time: number) => void;
}

/**
 * Changes are gathered this long before the row is read and written: a turn moves the session
 * through queued, running and idle within milliseconds, and its commits (one per streamed delta
 * too) must not each cost reads and a D1 write. The row is at most this far behind.
 */
const _GATHER_MS = 250;

/** First wait before a failed write is retried; it doubles per failure up to `_MAX_BACKOFF_MS`. */
const _FIRST_BACKOFF_MS = 1_000;
const _MAX_BACKOFF_MS = 60_000;
/**
 * Failures in a row after which the alarm stops retrying (about ten minutes of them): a directory
 * that stays broken (migrations never applied) must not wake an idle session every minute for
 * ever. The row stays dirty, and the session's next change writes it.
 */
const _MAX_ALARM_RETRIES = 12;
/**
 * A write in flight dies with its object (a deploy, an eviction, a crash). Before each write the
 * session's alarm is made due within this long (usually it already is: the turn's watchdog), and
 * a fresh instance's first alarm writes the row: the directory catches up without a new message.
 */
const _LOST_WRITE_MS = 60_000;

/**
 * One session's directory row. `changed()` runs after every committed transaction and only
 * schedules a look a moment later; the look costs two small reads unless the session's claim or
 * its unfinished messages moved, and only then reads the whole row and writes it if it differs
 * from the last one written. Writes go one at a time,
 * in order, never awaited by a turn: a directory that fails (D1 down, table missing, binding
 * absent) never fails or delays a turn. A failed write leaves the row dirty; the next change, or
 * the alarm armed for the retry, writes it again; a write lost with its object is written by the
 * next instance's alarm.
 */
export class DirectorySync {
  readonly #stores: SessionStores;
  readonly #options: DirectorySyncOptions;
  /** The mark of the state last read; null: read the row on the next change. */
  #mark: string | null = null;
  /** The row as last written successfully (JSON); null: nothing written by this instance yet. */
  #written: string | null = null;
  #writing = false;
  /** A change arrived while a write was in flight: read the row again after it. */
  #again = false;
  #failures = 0;
  /** A look is scheduled: further commits join it. */
  #gathering = false;
  /** The writes in flight, if any: what `close` waits for. */
  #flight: Promise<void> = Promise.resolve();
  /** Closed for erasure: nothing is looked at or written again. */
  #closed = false;

  constructor(stores: SessionStores, options: DirectorySyncOptions) {
    this.#stores = stores;
    this.#options = options;
  }

  /**
   * A sync of `stores`' row to `writer`, run after every commit of their database; its retries
   * arm the session's alarm no later than needed (an alarm due sooner stays).
   */
  static attach(stores: SessionStores, writer: DirectoryWriter, now: () => number): DirectorySync {
    const sync = new DirectorySync(stores, {
      writer,
      now,
      armRetry: (time) => stores.db.armWatchdog(now(), time),
    });
    stores.db.onEveryCommit(() => sync.changed());
    return sync;
  }

  /**
   * After a committed transaction: the row is looked at once the changes of the next moment are
   * gathered (`_GATHER_MS`), and written when what it shows moved. Costs nothing per commit.
   */
  changed(): void {
    if (this.#gathering || this.#closed) return;
    this.#gathering = true;
    setTimeout(() => {
      this.#gathering = false;
      this.#look();
    }, _GATHER_MS);
  }

  /** Writes the row when what it shows moved since the last look. Never throws. */
  #look(): void {
    if (this.#closed) return;
    try {
      const mark = `${
        JSON.stringify(this.#stores.claims.state())
      }|${this.#stores.inbox.openMark()}`;
      if (mark === this.#mark && !this.#dirty()) return;
      this.#mark = mark;
    } catch (error) {
      log.warn("directory: session state not read", { error: errorText(error) });
      return;
    }
    this.#kick();
  }

  /**
   * The alarm's part: a row whose write failed is written again, and so is the row of a fresh
   * instance (its predecessor may have died with a write in flight: see `_LOST_WRITE_MS`).
   */
  retry(): void {
    if (this.#dirty() || this.#written === null) this.#kick();
  }

  #dirty(): boolean {
    return this.#failures > 0;
  }

  /**
   * Stops the sync for good and resolves once no write is in flight: a row written after the
   * session's erasure removed it would list an erased session again.
   */
  close(): Promise<void> {
    this.#closed = true;
    return this.#flight;
  }

  #kick(): void {
    if (this.#closed) return;
    if (this.#writing) {
      this.#again = true;
      return;
    }
    this.#writing = true;
    this.#flight = this.#drain().finally(() => (this.#writing = false));
  }

  async #drain(): Promise<void> {
    do {
      this.#again = false;
      let entry: DirectoryEntry | null;
      try {
        entry = directoryEntry(this.#stores);
      } catch (error) {
        log.warn("directory: session row not read", { error: errorText(error) });
        return;
      }
      if (!entry || this.#closed) return;
      const text = JSON.stringify(entry);
      if (text === this.#written) continue;
      // If the object dies before this write lands, the alarm makes the next instance write it.
      this.#options.armRetry(this.#options.now() + _LOST_WRITE_MS);
      try {
        await this.#options.writer.upsert(entry);
        this.#written = text;
        this.#failures = 0;
      } catch (error) {
        this.#failures++;
        const wait = Math.min(_FIRST_BACKOFF_MS * 2 ** (this.#failures - 1), _MAX_BACKOFF_MS);
        log.warn("directory: row not written; retrying", {
          session_key: entry.key,
          error: errorText(error),
          failures: this.#failures,
          retry_in_ms: wait,
        });
        if (this.#failures <= _MAX_ALARM_RETRIES) {
          this.#options.armRetry(this.#options.now() + wait);
        }
        return;
      }
    } while (this.#again);
  }
}

// A session's SQLite handle: typed rows, and transactions whose token every store mutation requires; runtime-neutral.
import { errorText, log } from "../runtime/mod.ts";
import { type LazyTable, LazyTables } from "./lazy_tables.ts";

/** The subset of DurableObjectStorage a session uses (node:sqlite stands in for it in unit tests). */
export interface SessionStorage {
  sql: {
    exec(query: string, ...bindings: SqlValue[]): { toArray(): Record<string, unknown>[] };
  };
  transactionSync<T>(fn: () => T): T;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** A value SQLite takes as a binding. */
export type SqlValue = string | number | null;

declare const _txBrand: unique symbol;

/**
 * Proof of being inside `SessionDb.transaction`: every store method that writes takes one, and
 * only `transaction` makes one. Its callback cannot return a promise (the type checker refuses
 * it), so a write can never sit on the far side of an await — the claim is always taken, and a
 * message stored, in one synchronous step.
 */
export interface Tx {
  readonly [_txBrand]: true;
  /** Runs `fn` once the transaction has committed (never if it rolled back). */
  onCommit(fn: () => void): void;
}

/** A callback result that is not a promise: `never` makes an async callback a type error. */
export type NotPromise<T> = T extends PromiseLike<unknown> ? never : T;

/** One row as read: column name → value. */
export type Row = Record<string, unknown>;

/** The session's database: reads anywhere, writes only inside `transaction`. */
export class SessionDb {
  readonly #storage: SessionStorage;
  #open: _Tx | null = null;
  /** The alarm this instance last set and that has not fired yet, as far as it knows. */
  #alarmAt: number | null = null;
  /** Runs after every committed transaction (the session directory's sync). */
  #committed: (() => void) | null = null;
  /** Closed for erasure (`close`): no write, no alarm, from this handle again. */
  #closed = false;
  /** The table groups a new session does not create (lazy_tables.ts): which exist, created on use. */
  readonly tables: LazyTables;

  constructor(storage: SessionStorage) {
    this.#storage = storage;
    this.tables = new LazyTables({
      run: (statement) => void storage.sql.exec(statement).toArray(),
      tableNames: () =>
        storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`).toArray()
          .map((row) => String(row.name)),
    });
  }

  /**
   * Runs `fn` as one synchronous transaction and returns its result; callbacks registered with
   * `tx.onCommit` run after the commit. Nested calls join the outer transaction.
   */
  transaction<T>(fn: (tx: Tx) => NotPromise<T>): T {
    if (this.#closed) throw new Error("the session was erased");
    if (this.#open) return fn(this.#open as unknown as Tx);
    const tx = new _Tx();
    this.#open = tx;
    let result: T;
    let committed = false;
    try {
      result = this.#storage.transactionSync(() => {
        const out = fn(tx as unknown as Tx);
        if (out instanceof Promise) throw new TypeError("a session transaction cannot be async");
        return out;
      });
      committed = true;
    } finally {
      this.#open = null;
      this.tables.endTransaction(committed);
    }
    for (const after of tx.after) after();
    this.#committed?.();
    return result;
  }

  /**
   * The storage under this handle, as an identity only: what handles cache of a row is kept per
   * storage, so a second handle over it (a restart, in the tests' model of one) sees each write.
   */
  get storageIdentity(): object {
    return this.#storage;
  }

  /** Whether a transaction is open (its writes may still roll back). */
  get inTransaction(): boolean {
    return this.#open !== null;
  }

  /** Sets the one function run after every committed transaction, after its own `onCommit` callbacks. */
  onEveryCommit(fn: () => void): void {
    this.#committed = fn;
  }

  /** Rows of `query`. Stores only: each owns the SQL of its tables. */
  rows(query: string, ...bindings: SqlValue[]): Row[] {
    return this.#storage.sql.exec(query, ...bindings).toArray();
  }

  /** Whether `table`'s group exists (lazy_tables.ts): a store reads or deletes from it only then. */
  hasTable(table: LazyTable): boolean {
    return this.tables.has(table);
  }

  /** Creates `table`'s group unless it exists, before the write that needs it. */
  ensureTable(_tx: Tx, table: LazyTable): void {
    this.tables.ensure(table);
  }

  /** Runs a statement; inside a transaction only, as the token shows. */
  exec(_tx: Tx, query: string, ...bindings: SqlValue[]): Row[] {
    return this.#storage.sql.exec(query, ...bindings).toArray();
  }

  /**
   * Schedules the object's alarm (the drain, and the watchdog of a running turn). Not awaited: in a
   * Durable Object the alarm is a storage write behind the output gate, so nothing leaves the object
   * before it is durable, and waiting for it would only delay the turn. A failure is logged.
   */
  armAlarm(time: number): void {
    if (this.#closed) return;
    this.#alarmAt = time;
    this.#storage.setAlarm(time).catch((error) => {
      log.error("alarm not set", { error: errorText(error) });
    });
  }

  /**
   * Arms the watchdog to fire by `latest`, unless an alarm this instance set is already due
   * between `now` and then: a write saved per turn while turns follow each other.
   */
  armWatchdog(now: number, latest: number): void {
    if (this.#alarmAt !== null && this.#alarmAt > now && this.#alarmAt <= latest) return;
    this.armAlarm(latest);
  }

  /**
   * Closes this handle for good before its session's storage is erased: work still in flight from
   * before (a stopped turn's last steps, a notice's send) fails instead of writing into the
   * storage after the erasure, or into a fresh session's tables, and arms no alarm.
   */
  close(): void {
    this.#closed = true;
  }

  /** Records that the alarm fired (the host calls this first in its alarm handler): none is pending. */
  alarmFired(): void {
    this.#alarmAt = null;
  }
}

class _Tx {
  readonly after: (() => void)[] = [];
  onCommit(fn: () => void): void {
    this.after.push(fn);
  }
}

/** `row[column]` as a number. */
export function num(row: Row, column: string): number {
  return Number(row[column]);
}

/** `row[column]` as a number, or null. */
export function numOrNull(row: Row, column: string): number | null {
  return row[column] === null || row[column] === undefined ? null : Number(row[column]);
}

/** `row[column]` as a string. */
export function str(row: Row, column: string): string {
  return String(row[column]);
}

/** `row[column]` parsed as the JSON a store wrote there, or null when it is null. */
export function json<T>(row: Row, column: string): T | null {
  const value = row[column];
  return value === null || value === undefined ? null : JSON.parse(String(value)) as T;
}

// A run's durable event log, its table's shapes, and its live subscribers (replay, then live, then close); runtime-neutral.
import { type Transport, TransportTee } from "../runtime/mod.ts";
import { num, numOrNull, type Row, type SessionDb, str, type Tx } from "./session_db.ts";
import { SpillStore } from "./spill.ts";
import type { RunEvent } from "./types.ts";

/** Event types that end a run: subscribers are closed after one. Shared with functions/. */
export const FINAL_RUN_EVENTS: ReadonlySet<string> = new Set([
  "run.completed",
  "run.failed",
  "run.cancelled",
]);

/**
 * The statement that created `run_events` in the first release: a rowid table, its `(seq, idx)`
 * key kept again in the key's own index. Part of schema.ts's first migration: never changes.
 */
export const RUN_EVENTS_V1 = `CREATE TABLE IF NOT EXISTS run_events (
      seq INTEGER NOT NULL,
      idx INTEGER NOT NULL,
      type TEXT NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (seq, idx)
    )`;

/** When each run event happened: the inspector's run timeline (older events have none). */
export const RUN_EVENT_TIMES: readonly string[] = [
  `ALTER TABLE run_events ADD COLUMN at INTEGER`,
];

/**
 * The statement that creates the table under `name` as it is now, keyed by its primary key alone
 * (issue 32): as a rowid table every event stored was two rows written (billed), the row and its
 * key's index entry; `WITHOUT ROWID` stores the row in the key's own b-tree, one row an event.
 * Every read of the table is by `seq` (and `idx`), which that key serves as before.
 */
export function runEventsTable(name: string): string {
  return `CREATE TABLE ${name} (
      seq INTEGER NOT NULL,
      idx INTEGER NOT NULL,
      type TEXT NOT NULL,
      data TEXT NOT NULL,
      at INTEGER,
      PRIMARY KEY (seq, idx)
    ) WITHOUT ROWID`;
}

/** A database's run events moved into the keyed table (`runEventsTable`), rows unchanged. */
export const RUN_EVENTS_KEYED: readonly string[] = [
  runEventsTable("run_events_keyed"),
  `INSERT INTO run_events_keyed (seq, idx, type, data, at)
   SELECT seq, idx, type, data, at FROM run_events`,
  `DROP TABLE run_events`,
  `ALTER TABLE run_events_keyed RENAME TO run_events`,
];

/**
 * Events only the inspector's timeline shows: stored with the run's others, never sent to its
 * subscribers (the runs API's and a streamed completion's events stay as documented).
 */
export const TIMELINE_ONLY_EVENTS: ReadonlySet<string> = new Set([
  "model.completed",
  "model.failed",
  "model.fallback",
  "reply.sent",
  "reply.failed",
]);

/**
 * The `run_events` table, and per run a tee of its live subscribers. The tees live in memory:
 * lost with the instance, as the subscribers are.
 */
export class RunEventStore {
  readonly #db: SessionDb;
  readonly #tees = new Map<number, TransportTee<RunEvent>>();
  readonly #now: () => number;
  /** Event data too long for a row (a run's output near the body cap), in parts. */
  readonly #spill: SpillStore;
  /** Per run, the deltas sent live and not stored yet (`stream`), in order, each with its time. */
  readonly #pending = new Map<number, _Pending>();
  /**
   * The runs that recorded an event through this instance and have not ended: every turn's
   * settle asks `recorded()`, and its start was emitted here. Others (a predecessor's) are read.
   */
  readonly #started = new Set<number>();

  constructor(db: SessionDb, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
    this.#spill = new SpillStore(db);
  }

  /**
   * Appends an event to run `seq`'s log and to its subscribers; a final event closes them. The
   * run's text deltas kept by `stream` are stored first, in this same transaction, in order.
   */
  emit(tx: Tx, seq: number, type: string, data: Record<string, unknown>): void {
    this.#flush(tx, seq);
    this.#insert(tx, seq, type, data, this.#now());
    // Known once committed (a rolled-back start is not recorded); forgotten at the run's end.
    if (FINAL_RUN_EVENTS.has(type)) this.#forget(tx, seq);
    else if (!this.#started.has(seq)) tx.onCommit(() => this.#started.add(seq));
    if (TIMELINE_ONLY_EVENTS.has(type)) return;
    const tee = this.#tee(seq);
    tee.write({ type, data });
    if (FINAL_RUN_EVENTS.has(type)) {
      this.#tees.delete(seq);
      tee.close();
    }
  }

  /**
   * Sends a text delta of run `seq` to its subscribers at once, and keeps it in memory until the
   * run's next event (the model call's end, a tool call, the run's end) stores it in that event's
   * transaction: in a Durable Object a write holds every outgoing byte until it is durable, so a
   * delta stored as it streams would hold its own chunk back. A subscriber meanwhile replays it
   * from memory (`subscribe`); an instance that dies loses it with the attempt, whose events are
   * dropped when it runs again (`restartAttempt`, `dropResumedText`).
   */
  stream(seq: number, type: string, data: Record<string, unknown>): void {
    let pending = this.#pending.get(seq);
    if (!pending) this.#pending.set(seq, pending = []);
    // One sent while a transaction stores the earlier ones waits for the run's next event.
    pending.push({ type, data, at: this.#now() });
    this.#tee(seq).write({ type, data });
  }

  /**
   * Sends run `seq`'s stored events to `transport`, in order; then closes it when the run has
   * ended, or keeps it for the live events.
   */
  subscribe(seq: number, transport: Transport<RunEvent>): void {
    const rows = this.#db.rows(
      `SELECT idx, type, data FROM run_events WHERE seq = ? ORDER BY idx`,
      seq,
    );
    for (const row of rows) {
      if (TIMELINE_ONLY_EVENTS.has(str(row, "type"))) continue;
      const data = this.#data(seq, row);
      if (data && !transport.write({ type: str(row, "type"), data })) return;
    }
    for (const event of this.#pending.get(seq) ?? []) {
      if (!transport.write({ type: event.type, data: event.data })) return;
    }
    if (rows.some((row) => FINAL_RUN_EVENTS.has(str(row, "type")))) {
      transport.close();
      return;
    }
    this.#tee(seq).add(transport);
  }

  /**
   * Drops what a dead executor's attempt at run `seq` recorded (all but `run.queued`): the run is
   * about to start again, and a subscriber must see one start and one stream of deltas, in order.
   */
  restartAttempt(tx: Tx, seq: number): void {
    this.#pending.delete(seq);
    this.#forget(tx, seq);
    this.#db.exec(tx, `DELETE FROM run_events WHERE seq = ? AND type != 'run.queued'`, seq);
  }

  /**
   * Drops the text a dead executor streamed after run `seq`'s last answered question: the turn
   * resumes from that answer and streams its text again. Its tool events stay (a call it ran is
   * not run again, so they are the only record of it).
   */
  dropResumedText(tx: Tx, seq: number): void {
    // Any kept in memory came after the last answer: its event stored them before itself.
    this.#pending.delete(seq);
    this.#db.exec(
      tx,
      `DELETE FROM run_events WHERE seq = ? AND type = 'message.delta' AND idx > COALESCE(
         (SELECT MAX(idx) FROM run_events WHERE seq = ? AND type = 'approval.responded'), -1)`,
      seq,
      seq,
    );
  }

  /** Drops run `seq` from `#started` now and at the commit (after an `add` this transaction queued). */
  #forget(tx: Tx, seq: number): void {
    this.#started.delete(seq);
    tx.onCommit(() => this.#started.delete(seq));
  }

  /** Whether run `seq` has recorded anything (its turn started): then its end is recorded too. */
  recorded(seq: number): boolean {
    if (this.#started.has(seq)) return true;
    return this.#db.rows(`SELECT 1 FROM run_events WHERE seq = ? LIMIT 1`, seq).length > 0;
  }

  /** Run `seq`'s stored events in order, each with its time (null for events stored before times were). */
  timeline(seq: number): (RunEvent & { at: number | null })[] {
    const stored = this.#db.rows(
      `SELECT idx, type, data, at FROM run_events WHERE seq = ? ORDER BY idx`,
      seq,
    ).flatMap((row) => {
      const data = this.#data(seq, row);
      return data ? [{ type: str(row, "type"), data, at: numOrNull(row, "at") }] : [];
    });
    return [...stored, ...(this.#pending.get(seq) ?? [])];
  }

  /** Forgets the events of pruned runs. */
  prune(tx: Tx, seqs: number[]): void {
    for (const seq of seqs) {
      this.#pending.delete(seq);
      this.#db.exec(tx, `DELETE FROM run_events WHERE seq = ?`, seq);
      this.#spill.removeUnder(tx, `event:${seq}:`);
    }
  }

  /**
   * Stores run `seq`'s deltas kept in memory, in `tx`; they leave memory once it commits (rolled
   * back, it stored nothing, and the run's next event stores them).
   */
  #flush(tx: Tx, seq: number): void {
    const pending = this.#pending.get(seq);
    if (!pending || pending.storedBy === tx) return;
    pending.storedBy = tx;
    const count = pending.length;
    for (const event of pending) this.#insert(tx, seq, event.type, event.data, event.at);
    tx.onCommit(() => {
      pending.splice(0, count);
      pending.storedBy = undefined;
      if (!pending.length && this.#pending.get(seq) === pending) this.#pending.delete(seq);
    });
  }

  /** Stores one event row (its data spilled into parts when too long for a row). */
  #insert(tx: Tx, seq: number, type: string, data: Record<string, unknown>, at: number): void {
    const text = JSON.stringify(data);
    const fits = SpillStore.fits(text);
    const row = this.#db.exec(
      tx,
      `INSERT INTO run_events (seq, idx, type, data, at)
       VALUES (?, (SELECT coalesce(max(idx), -1) + 1 FROM run_events WHERE seq = ?), ?, ?, ?)
       RETURNING idx`,
      seq,
      seq,
      type,
      fits ? text : "{}",
      at,
    )[0];
    if (!fits) {
      const idx = num(row, "idx");
      const column = this.#spill.write(tx, _owner(seq, idx), text);
      const update = `UPDATE run_events SET data = ? WHERE seq = ? AND idx = ?`;
      this.#db.exec(tx, update, column, seq, idx);
    }
  }

  /** An event row's data, or undefined when it cannot be read back (the event is skipped). */
  #data(seq: number, row: Row): Record<string, unknown> | undefined {
    return this.#spill.tryJson<Record<string, unknown>>(_owner(seq, num(row, "idx")), row.data);
  }

  #tee(seq: number): TransportTee<RunEvent> {
    let tee = this.#tees.get(seq);
    if (!tee) {
      tee = new TransportTee<RunEvent>(_LIVE_ONLY);
      this.#tees.set(seq, tee);
    }
    return tee;
  }
}

/** A run's deltas sent live and kept in memory until its next event stores them, in order. */
type _Pending = { type: string; data: Record<string, unknown>; at: number }[] & {
  /** The transaction storing them, until it commits. */
  storedBy?: Tx;
};

/** The spill owner of event `idx` of run `seq`. */
function _owner(seq: number, idx: number): string {
  return `event:${seq}:${idx}:`;
}

// The tee's primary: the durable log is written by emit() itself, inside its transaction.
const _LIVE_ONLY = { write: () => true, close: () => {} };

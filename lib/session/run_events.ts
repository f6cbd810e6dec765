// A run's durable event log and its live subscribers (replay, then live, then close); runtime-neutral.
import { type Transport, TransportTee } from "../transport.ts";
import { json, numOrNull, type SessionDb, str, type Tx } from "./session_db.ts";
import type { RunEvent } from "./types.ts";

/** Event types that end a run: subscribers are closed after one. Shared with functions/. */
export const FINAL_RUN_EVENTS: ReadonlySet<string> = new Set([
  "run.completed",
  "run.failed",
  "run.cancelled",
]);

/**
 * The `run_events` table, and per run a tee of its live subscribers. The tees live in memory:
 * lost with the instance, as the subscribers are.
 */
export class RunEventStore {
  readonly #db: SessionDb;
  readonly #tees = new Map<number, TransportTee<RunEvent>>();
  readonly #now: () => number;

  constructor(db: SessionDb, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** Appends an event to run `seq`'s log and to its subscribers; a final event closes them. */
  emit(tx: Tx, seq: number, type: string, data: Record<string, unknown>): void {
    this.#db.exec(
      tx,
      `INSERT INTO run_events (seq, idx, type, data, at)
       VALUES (?, (SELECT coalesce(max(idx), -1) + 1 FROM run_events WHERE seq = ?), ?, ?, ?)`,
      seq,
      seq,
      type,
      JSON.stringify(data),
      this.#now(),
    );
    const tee = this.#tee(seq);
    tee.write({ type, data });
    if (FINAL_RUN_EVENTS.has(type)) {
      this.#tees.delete(seq);
      tee.close();
    }
  }

  /**
   * Sends run `seq`'s stored events to `transport`, in order; then closes it when the run has
   * ended, or keeps it for the live events.
   */
  subscribe(seq: number, transport: Transport<RunEvent>): void {
    const rows = this.#db.rows(`SELECT type, data FROM run_events WHERE seq = ? ORDER BY idx`, seq);
    for (const row of rows) {
      if (!transport.write({ type: str(row, "type"), data: json(row, "data")! })) return;
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
    this.#db.exec(tx, `DELETE FROM run_events WHERE seq = ? AND type != 'run.queued'`, seq);
  }

  /**
   * Drops the text a dead executor streamed after run `seq`'s last answered question: the turn
   * resumes from that answer and streams its text again. Its tool events stay (a call it ran is
   * not run again, so they are the only record of it).
   */
  dropResumedText(tx: Tx, seq: number): void {
    this.#db.exec(
      tx,
      `DELETE FROM run_events WHERE seq = ? AND type = 'message.delta' AND idx > COALESCE(
         (SELECT MAX(idx) FROM run_events WHERE seq = ? AND type = 'approval.responded'), -1)`,
      seq,
      seq,
    );
  }

  /** Run `seq`'s stored events in order, each with its time (null for events stored before times were). */
  timeline(seq: number): (RunEvent & { at: number | null })[] {
    return this.#db.rows(`SELECT type, data, at FROM run_events WHERE seq = ? ORDER BY idx`, seq)
      .map((row) => ({
        type: str(row, "type"),
        data: json(row, "data")!,
        at: numOrNull(row, "at"),
      }));
  }

  /** Forgets the events of pruned runs. */
  prune(tx: Tx, seqs: number[]): void {
    for (const seq of seqs) this.#db.exec(tx, `DELETE FROM run_events WHERE seq = ?`, seq);
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

// The tee's primary: the durable log is written by emit() itself, inside its transaction.
const _LIVE_ONLY = { write: () => true, close: () => {} };

// The session's run claim (the one `run` row): who holds the session, its generation, the conversation; runtime-neutral.
import { num, numOrNull, type SessionDb, type Tx } from "./session_db.ts";

/** The claim as stored. `seq` null: nobody holds the session. */
export interface ClaimState {
  generation: number;
  seq: number | null;
  conversation: number;
  startedAt: number | null;
}

/** A claim as its holder knows it: it still holds the session while both numbers match the row. */
export interface Claim {
  seq: number;
  generation: number;
  conversation: number;
}

/** Minimum time between two queued notices of one session, and between two queue-full notices. */
export const NOTICE_INTERVAL_MS = 30_000;

/**
 * The session notices that are throttled, each with its own slot (its `run` column): a queued
 * notice just sent must not silence the notice that a later message was dropped.
 */
export type NoticeKind = "queued" | "queue_full";

const _NOTICE_COLUMN: Record<NoticeKind, string> = {
  queued: "notice_at",
  queue_full: "queue_full_notice_at",
};

/**
 * The claim row as last read outside a transaction, per storage; null once a store writes it. A
 * turn asks `holds()` a dozen times and each `sql.exec` has a fixed cost: the row changes only
 * through a ClaimStore, so it is read again only after a write. Kept per storage, not per store, so
 * that a second store over one storage (a restart as the tests model it, the old instance still
 * running) sees the other's writes. A read inside a transaction is not kept: it may roll back.
 */
const _cached = new WeakMap<object, { state: ClaimState | null }>();

/** The `run` row as a new database's schema writes it (schema.ts): nobody holds the session. */
export const FRESH_CLAIM: ClaimState = Object.freeze({
  generation: 0,
  seq: null,
  conversation: 0,
  startedAt: null,
});

/**
 * The `run` row: one turn holds the session at a time. Every change of holder bumps the
 * generation, so a stopped or recovered holder's late writes are recognised and dropped.
 */
export class ClaimStore {
  readonly #db: SessionDb;
  /** The claim row as last read, shared by every store over this storage (`_cached`). */
  readonly #slot: { state: ClaimState | null };

  constructor(db: SessionDb) {
    this.#db = db;
    let slot = _cached.get(db.storageIdentity);
    if (!slot) _cached.set(db.storageIdentity, slot = { state: null });
    // A new store is a new start (a restart, the session built again after an erasure, whose
    // schema wrote a fresh row behind every store's back): it reads the row again.
    slot.state = null;
    this.#slot = slot;
  }

  get #cached(): ClaimState | null {
    return this.#slot.state;
  }

  set #cached(state: ClaimState | null) {
    this.#slot.state = state;
  }

  /** The claim row now. */
  state(): ClaimState {
    if (this.#cached) return this.#cached;
    const row = this.#db.rows(
      `SELECT generation, seq, conversation, started_at FROM run WHERE id = 1`,
    )[0];
    const state = Object.freeze({
      generation: num(row, "generation"),
      seq: numOrNull(row, "seq"),
      conversation: num(row, "conversation"),
      startedAt: numOrNull(row, "started_at"),
    });
    if (!this.#db.inTransaction) this.#cached = state;
    return state;
  }

  /**
   * Records that the row is the one a new database's schema wrote (`FRESH_CLAIM`): a new session's
   * first message then reads no claim it already knows.
   */
  knownFresh(): void {
    this.#cached = FRESH_CLAIM;
  }

  /** Whether `claim` still holds the session (no stop, no recovery took over). */
  holds(claim: Claim): boolean {
    const state = this.state();
    return state.generation === claim.generation && state.seq === claim.seq;
  }

  /** Takes the session for message `seq`; null when somebody holds it already. */
  take(tx: Tx, seq: number, now: number): Claim | null {
    const state = this.state();
    if (state.seq !== null) return null;
    const generation = state.generation + 1;
    this.#cached = null;
    this.#db.exec(
      tx,
      `UPDATE run SET seq = ?, generation = ?, started_at = ? WHERE id = 1`,
      seq,
      generation,
      now,
    );
    return { seq, generation, conversation: state.conversation };
  }

  /** A new holder of the current claim (a recovery resuming its sending): same seq, next generation. */
  renew(tx: Tx, now: number): Claim | null {
    const state = this.state();
    if (state.seq === null) return null;
    const generation = state.generation + 1;
    this.#cached = null;
    this.#db.exec(
      tx,
      `UPDATE run SET generation = ?, started_at = ? WHERE id = 1`,
      generation,
      now,
    );
    return { seq: state.seq, generation, conversation: state.conversation };
  }

  /** Frees the session. With `revoke` the generation moves on, so the holder's late end changes nothing. */
  release(tx: Tx, revoke = false): void {
    this.#cached = null;
    this.#db.exec(
      tx,
      revoke
        ? `UPDATE run SET seq = NULL, started_at = NULL, generation = generation + 1 WHERE id = 1`
        : `UPDATE run SET seq = NULL, started_at = NULL WHERE id = 1`,
    );
  }

  /** Starts a new conversation: later turns see an empty history. */
  newConversation(tx: Tx): void {
    this.#cached = null;
    this.#db.exec(tx, `UPDATE run SET conversation = conversation + 1 WHERE id = 1`);
  }

  /** Whether a notice of `kind` may go out now (none in the last 30 s); records it when so. */
  takeNoticeSlot(tx: Tx, now: number, kind: NoticeKind = "queued"): boolean {
    const column = _NOTICE_COLUMN[kind];
    const row = this.#db.rows(`SELECT ${column} FROM run WHERE id = 1`)[0];
    if (now - num(row, column) < NOTICE_INTERVAL_MS) return false;
    this.#db.exec(tx, `UPDATE run SET ${column} = ? WHERE id = 1`, now);
    return true;
  }
}

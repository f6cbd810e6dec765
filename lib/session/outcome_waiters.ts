// Callers waiting for a message's outcome (or its pause for approval), told once the transaction that settled it has committed; runtime-neutral.
import type { Tx } from "./session_db.ts";
import type { TurnOutcome } from "./types.ts";

type _Waiter = { resolve: (outcome: TurnOutcome | null) => void; untilPaused: boolean };

/** In-memory waiters per message: lost with the instance, which is why callers ask again after a restart. */
export class OutcomeWaiters {
  readonly #waiters = new Map<number, _Waiter[]>();

  /** Resolves with message `seq`'s outcome once `settled` reports it. */
  wait(seq: number): Promise<TurnOutcome>;
  /** With `untilPaused`, resolves with null as soon as its turn pauses for approval instead. */
  wait(seq: number, untilPaused: boolean): Promise<TurnOutcome | null>;
  wait(seq: number, untilPaused = false): Promise<TurnOutcome | null> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(seq) ?? [];
      list.push({ resolve, untilPaused });
      this.#waiters.set(seq, list);
    });
  }

  /** Reports message `seq`'s outcome to its waiters once `tx` has committed (never if it rolls back). */
  settled(tx: Tx, seq: number, outcome: TurnOutcome): void {
    tx.onCommit(() => {
      const list = this.#waiters.get(seq);
      this.#waiters.delete(seq);
      for (const waiter of list ?? []) waiter.resolve(outcome);
    });
  }

  /** Tells the waiters that asked for it that message `seq`'s turn paused, once `tx` has committed. */
  paused(tx: Tx, seq: number): void {
    tx.onCommit(() => {
      const list = this.#waiters.get(seq) ?? [];
      const staying = list.filter((waiter) => !waiter.untilPaused);
      if (staying.length) this.#waiters.set(seq, staying);
      else this.#waiters.delete(seq);
      for (const waiter of list) if (waiter.untilPaused) waiter.resolve(null);
    });
  }
}

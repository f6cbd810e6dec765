// Callers waiting for a message's outcome, told once the transaction that settled it has committed; runtime-neutral.
import type { Tx } from "./session_db.ts";
import type { TurnOutcome } from "./types.ts";

/** In-memory waiters per message: lost with the instance, which is why callers ask again after a restart. */
export class OutcomeWaiters {
  readonly #waiters = new Map<number, ((outcome: TurnOutcome) => void)[]>();

  /** Resolves with message `seq`'s outcome once `settled` reports it. */
  wait(seq: number): Promise<TurnOutcome> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(seq) ?? [];
      list.push(resolve);
      this.#waiters.set(seq, list);
    });
  }

  /** Reports message `seq`'s outcome to its waiters once `tx` has committed (never if it rolls back). */
  settled(tx: Tx, seq: number, outcome: TurnOutcome): void {
    tx.onCommit(() => {
      const list = this.#waiters.get(seq);
      this.#waiters.delete(seq);
      for (const resolve of list ?? []) resolve(outcome);
    });
  }
}

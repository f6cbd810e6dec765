// A deadline as an abort signal whose timer is cleared when the work ends, where AbortSignal.timeout's stays until it fires (workerd allows an object 10,000 active timers); runtime-neutral (setTimeout, AbortController).

/** The longest delay setTimeout keeps (a longer one fires at once); a deadline past it is capped. */
const _MAX_DELAY_MS = 2_147_483_647;

/** A deadline on one piece of work (a turn, a call out, a download): cleared when the work ends. */
export interface Deadline {
  /**
   * Aborts when the deadline passes, with the same reason `AbortSignal.timeout` gives (a
   * "TimeoutError" DOMException), or when one of the signals it was given aborts, with that
   * signal's reason — whichever comes first.
   */
  readonly signal: AbortSignal;
  /** Whether it was the deadline that passed (not one of the given signals that aborted). */
  readonly expired: boolean;
  /**
   * Ends the timer and the watch on the given signals, so that nothing stays active once the work
   * is over; the signal then keeps whatever state it has. Safe to call more than once.
   */
  clear(): void;
}

/**
 * A deadline `ms` from now (none when null) joined with `signals` (null ones skipped): what
 * `AbortSignal.any([...signals, AbortSignal.timeout(ms)])` gives, except that its timer is a
 * `setTimeout` the caller clears (in a `finally`) when the work ends. An uncleared
 * `AbortSignal.timeout` counts as an active timer until it fires: a session given thousands of
 * turns and calls within one turn timeout ran out of them ("exceeded the number of active
 * timeouts").
 */
export function deadlineSignal(
  ms: number | null,
  ...signals: readonly (AbortSignal | null | undefined)[]
): Deadline {
  const controller = new AbortController();
  const given = signals.filter((s): s is AbortSignal => s != null);
  let expired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watches: [AbortSignal, () => void][] = [];
  const clear = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    for (const [signal, onAbort] of watches.splice(0)) {
      signal.removeEventListener("abort", onAbort);
    }
  };
  const stop = (reason: unknown) => {
    clear();
    controller.abort(reason);
  };
  const deadline: Deadline = {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear,
  };
  const aborted = given.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return deadline;
  }
  for (const signal of given) {
    const onAbort = () => stop(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    watches.push([signal, onAbort]);
  }
  if (ms !== null) {
    timer = setTimeout(() => {
      expired = true;
      stop(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    }, Math.min(Math.max(ms, 0), _MAX_DELAY_MS));
  }
  return deadline;
}

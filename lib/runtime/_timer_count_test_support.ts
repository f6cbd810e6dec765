// Test support: counts active timers the way workerd's cap does (set and neither fired nor cleared, AbortSignal.timeout's included); Deno (tests only).

/** A count of the timers set since `countTimers()`, until `restore()`. */
export interface TimerCount {
  /** The timers set and not yet fired or cleared (an `AbortSignal.timeout` only ends by firing). */
  active(): number;
  /** Puts the runtime's own setTimeout, clearTimeout and AbortSignal.timeout back. */
  restore(): void;
}

/**
 * Wraps `setTimeout`, `clearTimeout` and `AbortSignal.timeout` to count active timers, as workerd
 * does for its limit of 10,000 per object: Deno's own `AbortSignal.timeout` does not go through
 * `setTimeout`, yet in workerd its timer stays active until it fires. Call `restore()` in a
 * `finally`.
 */
export function countTimers(): TimerCount {
  const g = globalThis as unknown as {
    setTimeout: (fn: () => void, ms?: number) => number;
    clearTimeout: (id?: number) => void;
  };
  const { setTimeout: set, clearTimeout: clear } = g;
  const timeout = AbortSignal.timeout;
  const active = new Set<unknown>();
  g.setTimeout = (fn: () => void, ms?: number) => {
    const id: number = set(() => {
      active.delete(id);
      fn();
    }, ms);
    active.add(id);
    return id;
  };
  g.clearTimeout = (id?: number) => {
    active.delete(id);
    clear(id);
  };
  AbortSignal.timeout = (ms: number) => {
    const signal = timeout.call(AbortSignal, ms);
    const token = {};
    active.add(token);
    signal.addEventListener("abort", () => active.delete(token), { once: true });
    return signal;
  };
  return {
    active: () => active.size,
    restore() {
      g.setTimeout = set;
      g.clearTimeout = clear;
      AbortSignal.timeout = timeout;
    },
  };
}

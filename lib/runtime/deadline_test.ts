// Unit tests of deadlineSignal: the same abort reasons as AbortSignal.timeout/any, and no timer left once cleared; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { deadlineSignal } from "./deadline.ts";
import { countTimers } from "./_timer_count_test_support.ts";

/** Resolves when `signal` aborts. */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));

Deno.test("deadlineSignal() aborts at its deadline with AbortSignal.timeout's TimeoutError", async () => {
  const deadline = deadlineSignal(10);
  await aborted(deadline.signal);
  const reason = deadline.signal.reason as DOMException;
  assert(reason instanceof DOMException);
  assertEquals([reason.name, reason.message], [
    "TimeoutError",
    "The operation was aborted due to timeout",
  ]);
  assert(deadline.expired);
});

Deno.test("deadlineSignal() aborts with a given signal's reason, and then holds no timer", () => {
  const timers = countTimers();
  try {
    const caller = new AbortController();
    const deadline = deadlineSignal(60_000, null, caller.signal, undefined);
    assertEquals(timers.active(), 1);
    const reason = new Error("turn stopped");
    caller.abort(reason); // an abort is dispatched at once
    assertStrictEquals(deadline.signal.reason, reason);
    assertEquals(deadline.expired, false);
    assertEquals(timers.active(), 0);
  } finally {
    timers.restore();
  }
});

Deno.test("deadlineSignal() is aborted at once by a signal aborted already, and sets no timer", () => {
  const timers = countTimers();
  try {
    const deadline = deadlineSignal(60_000, AbortSignal.abort("gone"));
    assert(deadline.signal.aborted);
    assertEquals(deadline.signal.reason, "gone");
    assertEquals(timers.active(), 0);
  } finally {
    timers.restore();
  }
});

Deno.test("deadlineSignal().clear() ends the timer and the watch: the signal never aborts", async () => {
  const timers = countTimers();
  try {
    const caller = new AbortController();
    const deadline = deadlineSignal(5, caller.signal);
    deadline.clear();
    deadline.clear();
    assertEquals(timers.active(), 0);
    caller.abort();
    // Waited past the cleared 5 ms: what is checked is that nothing happens, so no event to await.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assertEquals([deadline.signal.aborted, deadline.expired], [false, false]);
  } finally {
    timers.restore();
  }
});

Deno.test("deadlineSignal() with null sets no timer, and caps one past setTimeout's range", () => {
  const timers = countTimers();
  try {
    const none = deadlineSignal(null);
    assertEquals(timers.active(), 0);
    none.clear();
    // 2^31 ms and more would fire at once under setTimeout; capped, it stays pending.
    const far = deadlineSignal(2 ** 40);
    assertEquals([timers.active(), far.signal.aborted], [1, false]);
    far.clear();
    assertEquals(timers.active(), 0);
  } finally {
    timers.restore();
  }
});

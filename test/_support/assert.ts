// Offline stand-in for jsr:@std/assert (JSR is unreachable here), over node:assert/strict; any runtime.
// Only the subset baton's tests use. Swap deno.json's "@std/assert" mapping to jsr:@std/assert@^1 when JSR is reachable.
import nodeAssert from "node:assert/strict";

/** Thrown by every assertion here. */
export const AssertionError = nodeAssert.AssertionError;

/** Asserts that `expr` is truthy. */
export function assert(expr: unknown, msg?: string): asserts expr {
  nodeAssert.ok(expr, msg);
}

/** Asserts deep equality. */
export function assertEquals<T>(actual: unknown, expected: T, msg?: string): asserts actual is T {
  nodeAssert.deepStrictEqual(actual, expected, msg);
}

/** Asserts deep inequality. */
export function assertNotEquals(actual: unknown, expected: unknown, msg?: string): void {
  nodeAssert.notDeepStrictEqual(actual, expected, msg);
}

/** Asserts `Object.is` equality. */
export function assertStrictEquals<T>(
  actual: unknown,
  expected: T,
  msg?: string,
): asserts actual is T {
  nodeAssert.strictEqual(actual, expected, msg);
}

/** Asserts that `actual` is neither null nor undefined. */
export function assertExists<T>(actual: T, msg?: string): asserts actual is NonNullable<T> {
  nodeAssert.ok(actual !== null && actual !== undefined, msg ?? `expected a value, got ${actual}`);
}

/** Asserts that `actual` matches `expected`. */
export function assertMatch(actual: string, expected: RegExp, msg?: string): void {
  nodeAssert.match(actual, expected, msg);
}

/** Asserts that `fn` throws; returns what it threw. */
export function assertThrows(fn: () => unknown, msg?: string): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new AssertionError({ message: msg ?? "expected function to throw" });
}

/** Asserts that `fn` rejects; returns the rejection reason. */
export async function assertRejects(
  fn: () => PromiseLike<unknown>,
  msg?: string,
): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new AssertionError({ message: msg ?? "expected promise to reject" });
}

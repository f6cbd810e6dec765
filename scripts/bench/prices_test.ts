// Tests of the bench's price arithmetic (scripts/bench/prices.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import { doDurationDollars, dollarsPerMillionTurns, PRICES } from "./prices.ts";

/** Floating point sums: equal to a millionth of a dollar. */
function assertAlmostEquals(actual: number, expected: number): void {
  assert(Math.abs(actual - expected) < 1e-6, `${actual} is not ${expected}`);
}

Deno.test("dollarsPerMillionTurns() prices each billed dimension per turn at its marginal rate", () => {
  const cost = dollarsPerMillionTurns({
    workerRequests: 1,
    cpuMs: 2,
    doRequests: 2,
    doActiveMs: 1000,
    sqlRowsRead: 100,
    sqlRowsWritten: 30,
    d1RowsRead: 2,
    d1RowsWritten: 4,
  });
  assertAlmostEquals(cost.workerRequests, 0.30);
  assertAlmostEquals(cost.cpu, 0.04);
  assertAlmostEquals(cost.doRequests, 0.30);
  // One second of 128 MB: 0.125 GB-s at $12.50 per million GB-s.
  assertAlmostEquals(cost.doDuration, 1.5625);
  assertAlmostEquals(cost.rowsRead, 0.102);
  assertAlmostEquals(cost.rowsWritten, 34);
  assertAlmostEquals(cost.total, 0.30 + 0.04 + 0.30 + 1.5625 + 0.102 + 34);
});

Deno.test("doDurationDollars() of a 10 s model call is 10 × 0.125 GB-s at the published rate", () => {
  assertAlmostEquals(doDurationDollars(10_000), 15.625);
  assertEquals(PRICES.doMemoryGb, 0.125);
});

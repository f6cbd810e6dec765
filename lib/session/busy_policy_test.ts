// Unit tests for lib/session/busy_policy.ts; Deno.
import { assertEquals } from "@std/assert";
import { decideBusy } from "./busy_policy.ts";

const idle = { running: false, waiting: 0, mergeTarget: false };
const running = { running: true, waiting: 0, mergeTarget: false };

Deno.test("decideBusy() queues without a notice when the session is idle, in every mode", () => {
  for (const mode of ["queue", "interrupt", "merge"] as const) {
    assertEquals(decideBusy(idle, { mode, maxQueued: 32 }, false), {
      action: "queue",
      notify: false,
    });
  }
});

Deno.test("decideBusy() queues with a notice behind a running turn or waiting messages", () => {
  const rules = { mode: "queue" as const, maxQueued: 32 };
  assertEquals(decideBusy(running, rules, false), { action: "queue", notify: true });
  assertEquals(decideBusy({ ...idle, waiting: 1 }, rules, false), {
    action: "queue",
    notify: true,
  });
});

Deno.test("decideBusy() refuses the message over maxQueued, whatever the mode", () => {
  for (const mode of ["queue", "interrupt"] as const) {
    assertEquals(decideBusy({ ...running, waiting: 2 }, { mode, maxQueued: 2 }, false), {
      action: "refuse",
      notify: true,
    });
  }
});

Deno.test("decideBusy() interrupts only a running turn", () => {
  const rules = { mode: "interrupt" as const, maxQueued: 32 };
  assertEquals(decideBusy(running, rules, false), { action: "interrupt", notify: false });
  assertEquals(decideBusy({ ...idle, waiting: 1 }, rules, false), {
    action: "queue",
    notify: true,
  });
});

Deno.test("decideBusy() merges into a queued message behind a running turn, never a run with events", () => {
  const rules = { mode: "merge" as const, maxQueued: 1 };
  const target = { running: true, waiting: 1, mergeTarget: true };
  assertEquals(decideBusy(target, rules, false), { action: "merge", notify: true });
  assertEquals(decideBusy(target, rules, true).action, "refuse", "a run keeps its own row");
  assertEquals(decideBusy({ ...running }, { ...rules, maxQueued: 32 }, false).action, "queue");
});

Deno.test("decideBusy() steers behind a running turn in steer mode (not an event-recording run), and a /steer in any mode", () => {
  const steer = { mode: "steer" as const, maxQueued: 32 };
  assertEquals(decideBusy(running, steer, false), { action: "steer", notify: false });
  assertEquals(decideBusy(running, steer, true), { action: "queue", notify: true });
  assertEquals(decideBusy(idle, steer, false), { action: "queue", notify: false });
  for (const mode of ["queue", "interrupt", "merge"] as const) {
    const merging = { ...running, mergeTarget: true };
    assertEquals(decideBusy(merging, { mode, maxQueued: 32 }, false, true), {
      action: "steer",
      notify: false,
    });
  }
  assertEquals(decideBusy({ ...running, waiting: 2 }, { ...steer, maxQueued: 2 }, false, true), {
    action: "refuse",
    notify: true,
  });
});

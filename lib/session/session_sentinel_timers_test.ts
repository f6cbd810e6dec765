// Unit tests: a session's turns leave no turn-deadline timer active once they end (workerd caps an object's active timers at 10,000); Deno over node:sqlite.
import { assertEquals } from "@std/assert";
import { countTimers } from "../runtime/_timer_count_test_support.ts";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { runClaimedTurn } from "./run_claimed_turn.ts";
import type { TurnProgress } from "./types.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

Deno.test("SessionSentinel leaves no timer active once its turns end", async () => {
  const exec = recordingExecutor();
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, options);
  const timers = countTimers();
  try {
    for (const text of ["a", "b", "c"]) await sentinel.submit(msg(text));
    await sentinel.drain();
    assertEquals(exec.state.order, ["a", "b", "c"]);
    assertEquals(timers.active(), 0, "a turn's deadline outlived it");
  } finally {
    timers.restore();
  }
});

Deno.test("runClaimedTurn() leaves no timer active once the turn ends, or fails", async () => {
  const progress: TurnProgress = { step: 0, messages: [] };
  const timers = countTimers();
  try {
    const done = await runClaimedTurn(
      () =>
        Promise.resolve({
          reply: "hi",
          messages: [],
          usage: { prompt_tokens: 0, completion_tokens: 0 },
        }),
      msg("a"),
      [],
      progress,
      new AbortController(),
      60_000,
    );
    assertEquals(done.outcome.status, "completed");
    const failed = await runClaimedTurn(
      () => Promise.reject(new Error("boom")),
      msg("b"),
      [],
      progress,
      new AbortController(),
      60_000,
    );
    assertEquals(failed.outcome, {
      status: "failed",
      error: { message: "the turn failed", type: "turn_error" },
    });
    assertEquals(timers.active(), 0, "a turn's deadline outlived it");
  } finally {
    timers.restore();
  }
});

Deno.test("runClaimedTurn() still ends a turn at its deadline, as a timeout", async () => {
  const progress: TurnProgress = { step: 0, messages: [] };
  const hung = () => new Promise<never>(() => {});
  const result = await runClaimedTurn(hung, msg("a"), [], progress, new AbortController(), 20);
  assertEquals(result.outcome, {
    status: "failed",
    error: { message: "the turn timed out", type: "turn_timeout" },
  });
});

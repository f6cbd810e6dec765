// Unit tests: a session's timers — an API turn's model call reached with no timer hop after its submit, and no turn-deadline timer left active once turns end (workerd caps an object's active timers at 10,000); Deno over node:sqlite.
import { assertEquals } from "@std/assert";
import { countTimers } from "../runtime/_timer_count_test_support.ts";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { runClaimedTurn } from "./run_claimed_turn.ts";
import type { TurnExecutor, TurnProgress } from "./types.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

const noUsage = { prompt_tokens: 0, completion_tokens: 0 };

Deno.test("SessionSentinel.submit() reaches a warm idle session's model call before any timer runs, a chat's after one", async () => {
  // workerd commits an object's writes once its code yields to the event loop (a timer, any I/O)
  // and holds every call out until they are durable: with no hop between the submit and the
  // model call, the message, its claim and the watchdog are one commit before the model request.
  const storage = sqliteStorage();
  const transactionSync = storage.transactionSync.bind(storage);
  let transactions = 0;
  storage.transactionSync = (fn) => (transactions++, transactionSync(fn));
  const asked: { text: string; transactions: number }[] = [];
  const execute: TurnExecutor = (message) => {
    asked.push({ text: message.text, transactions });
    return Promise.resolve({ reply: "ok", messages: [], usage: noUsage });
  };
  const sentinel: SessionSentinel = new SessionSentinel(storage, execute, {
    ...options,
    startDrain: () => void sentinel.drain(),
  });
  const firstTimer = () =>
    new Promise<string[]>((r) => setTimeout(() => r(asked.map((a) => a.text))));
  await sentinel.outcome(sentinel.submit(msg("first")).seq); // the schema written: a warm session
  await firstTimer(); // and its drain ended: the session idle
  transactions = 0;
  const api = sentinel.submit(msg("api"));
  assertEquals(await firstTimer(), ["first", "api"], "an API turn's model call waited for a timer");
  // The submit, and the drain's look for expired approvals, a dead claim, a resumed turn, then
  // its claim: savepoints of one commit in workerd.
  assertEquals(asked[1].transactions, 5, "steps before a warm turn's model call");
  await sentinel.outcome(api.seq);
  // A chat's webhook is acknowledged before its turn's work starts (session_sentinel.ts).
  const chat = sentinel.submit({ ...msg("chat"), reply: { platform: "telegram", chat_id: "1" } });
  assertEquals(await firstTimer(), ["first", "api"], "a chat's turn started before its ack left");
  await sentinel.outcome(chat.seq);
  assertEquals(asked.map((a) => a.text), ["first", "api", "chat"]);
});

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

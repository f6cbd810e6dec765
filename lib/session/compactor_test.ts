// Unit tests of compaction in the session: the summary and newest turns a turn sees, a summary call cut off by a restart, overflow recovery, /compact; Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { type ChatMessage, messageText, ModelError } from "../agent/mod.ts";
import { parseCommand } from "../chat/mod.ts";
import { SessionSentinel, type SummaryRequest, type TurnExecutor } from "./mod.ts";
import { msg, options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { SUMMARY_LABEL } from "./compactor.ts";

/** About 30 tokens of text by the estimate (chars/4), named so a history shows which turn it is. */
const said = (n: number) => `turn ${n} ${"x".repeat(110)}`;

/**
 * An executor that records each history it is given and reports, as a provider would, the
 * prompt's size in tokens (its characters / 4) on its event recorder.
 */
function measuringExecutor(
  fail?: (history: ChatMessage[], text: string) => Error | null,
): { execute: TurnExecutor; histories: ChatMessage[][] } {
  const histories: ChatMessage[][] = [];
  const execute: TurnExecutor = (message, history, _signal, progress) => {
    histories.push(history);
    progress.step = 1;
    const error = fail?.(history, message.text);
    if (error) return Promise.reject(error);
    const chars = JSON.stringify(history).length + message.text.length;
    const reply = `re: ${message.text}`;
    progress.emit?.("model.completed", {
      prompt_tokens: Math.ceil(chars / 4),
      completion_tokens: Math.ceil(reply.length / 4),
    });
    return Promise.resolve({
      reply,
      messages: [{ role: "user", content: message.text }, { role: "assistant", content: reply }],
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  };
  return { execute, histories };
}

/** A summarizer that records what it was asked and answers "S<n>". */
function countingSummarizer() {
  const asked: SummaryRequest[] = [];
  const summarize = (request: SummaryRequest) => {
    asked.push(request);
    return Promise.resolve(`S${asked.length}`);
  };
  return { asked, summarize };
}

async function turn(sentinel: SessionSentinel, text: string) {
  const { seq } = sentinel.submit(msg(text));
  await sentinel.drain();
  return await sentinel.outcome(seq);
}

Deno.test("Compactor: past CONTEXT_TOKENS a turn sees the summary plus the newest turns, and the transcript keeps every message", async () => {
  const { execute, histories } = measuringExecutor();
  const { asked, summarize } = countingSummarizer();
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    compaction: { contextTokens: 400, summarize },
  });
  for (let n = 1; n <= 8; n++) assertEquals((await turn(sentinel, said(n))).status, "completed");
  assertEquals(asked.length, 1, "one compaction");
  const at = histories.findIndex((h) => h[0]?.role === "system");
  assert(at > 0, "a later turn saw a summary");
  const seen = histories[at];
  assertEquals(seen[0], { role: "system", content: `${SUMMARY_LABEL}\nS1` });
  // The newest turns follow as they are: whole turns, the newest one last.
  assert(seen.length > 1 && seen.length % 2 === 1);
  assertEquals(seen[1].role, "user");
  assertMatch(messageText(seen.at(-1)!), new RegExp(`^re: turn ${at} `));
  // The summary was asked of the oldest turns only, and is not asked of them again.
  assertMatch(asked[0].input, /turn 1 /);
  assert(!asked[0].input.includes(`turn ${at} `));
  assertEquals(histories.at(-1)![0], seen[0]);
  // Every original message is kept, and the summary is shown with the range it covers.
  const snapshot = sentinel.snapshot();
  assertEquals(snapshot.messages.length, 16);
  const [compaction] = snapshot.compactions!;
  assertEquals(compaction.from, 0);
  assertEquals(compaction.through, compaction.messages - 1);
  assertEquals(compaction.summary, "S1");
  assertEquals(compaction.messages, 16 - 2 - (seen.length - 1) - 2 * (8 - at - 1));
});

Deno.test("Compactor: a summary call cut off by a restart leaves no summary; the next attempt compacts once", async () => {
  const storage = sqliteStorage();
  const setup = measuringExecutor();
  const hung = Promise.withResolvers<string>();
  let calls = 0;
  const first = new SessionSentinel(storage, setup.execute, {
    ...options,
    compaction: { contextTokens: 400, summarize: () => (calls++, hung.promise) },
  });
  for (let n = 1; n <= 6; n++) await turn(first, said(n));
  // The turn that needs a compaction claims the session, then its summary call never returns.
  const { seq } = first.submit(msg(said(7)));
  const draining = first.drain();
  while (calls === 0) await new Promise((r) => setTimeout(r, 1));
  const before = first.snapshot();
  assertEquals(before.compactions, undefined);
  // A new instance over the same storage (a restart) recovers the claim and runs the step again.
  const { asked, summarize } = countingSummarizer();
  const after = measuringExecutor();
  const second = new SessionSentinel(storage, after.execute, {
    ...options,
    compaction: { contextTokens: 400, summarize },
  });
  await second.drain();
  assertEquals((await second.outcome(seq)).status, "completed");
  // The dead instance's summary arrives late: its claim is gone, nothing is written.
  hung.resolve("LATE");
  await draining.catch(() => {});
  const snapshot = second.snapshot();
  assertEquals(asked.length, 1);
  assertEquals(snapshot.compactions?.map((c) => c.summary), ["S1"]);
  assertEquals(snapshot.messages.length, 14, "nothing lost, nothing twice");
  assertEquals(after.histories[0][0], { role: "system", content: `${SUMMARY_LABEL}\nS1` });
});

Deno.test("runCompactedTurn: a context overflow compacts and runs the turn once more", async () => {
  // Too long until the history is a summary.
  const tooLong = (history: ChatMessage[], text: string) =>
    text.startsWith("big") && history[0]?.role !== "system"
      ? new ModelError("too long", 400, false, true)
      : null;
  const { execute, histories } = measuringExecutor(tooLong);
  const { asked, summarize } = countingSummarizer();
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    compaction: { contextTokens: 100_000, summarize },
  });
  for (let n = 1; n <= 3; n++) await turn(sentinel, said(n));
  const outcome = await turn(sentinel, "big question");
  assertEquals(outcome.status, "completed");
  assertEquals(asked.length, 1);
  assertEquals(histories.length, 5, "the overflowing turn ran twice");
  assertEquals(histories.at(-1), [{ role: "system", content: `${SUMMARY_LABEL}\nS1` }]);
});

Deno.test("runCompactedTurn: still too long after compacting, the turn fails with context_length_exceeded and the session goes on", async () => {
  const always = (_h: ChatMessage[], text: string) =>
    text === "huge" ? new ModelError("too long", 400, false, true) : null;
  const { execute } = measuringExecutor(always);
  const { asked, summarize } = countingSummarizer();
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    compaction: { contextTokens: 100_000, summarize },
  });
  await turn(sentinel, said(1));
  const failed = await turn(sentinel, "huge");
  assertEquals(failed.status === "failed" && failed.error.type, "context_length_exceeded");
  assertEquals(asked.length, 1, "compacted once, retried once");
  assertEquals((await turn(sentinel, "small")).status, "completed");
});

Deno.test("/compact compacts now, as a turn of its own, and the next turn sees the summary", async () => {
  const { execute, histories } = measuringExecutor();
  const { asked, summarize } = countingSummarizer();
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    compaction: { contextTokens: 100_000, summarize },
  });
  await turn(sentinel, said(1));
  await turn(sentinel, said(2));
  const { seq } = sentinel.submit({ ...msg("/compact"), command: parseCommand("/compact") });
  await sentinel.drain();
  const outcome = await sentinel.outcome(seq);
  assertEquals(outcome.status === "completed" && outcome.reply.startsWith("Compacted 4 "), true);
  assertEquals(histories.length, 2, "no model turn for /compact");
  await turn(sentinel, "next");
  assertEquals(histories.at(-1), [{ role: "system", content: `${SUMMARY_LABEL}\nS1` }]);
  assertEquals(asked.length, 1);
  // /status shows the context's size.
  const status = sentinel.submit({ ...msg("/status"), command: parseCommand("/status") });
  assertMatch(status.notice!, /Context: about \d+ tokens of 100,000/);
});

Deno.test("Compactor: CONTEXT_TOKENS=off never compacts, and /compact says so", async () => {
  const { execute, histories } = measuringExecutor();
  const { asked, summarize } = countingSummarizer();
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    compaction: { contextTokens: null, summarize },
  });
  for (let n = 1; n <= 8; n++) await turn(sentinel, said(n));
  const { seq } = sentinel.submit({ ...msg("/compact"), command: parseCommand("/compact") });
  await sentinel.drain();
  const outcome = await sentinel.outcome(seq);
  assertEquals(outcome.status === "completed" && outcome.reply, "Compaction is off here.");
  assertEquals(asked.length, 0);
  assertEquals(histories.at(-1)!.length, 14);
});

Deno.test("Compactor.measure() stores no context size while CONTEXT_TOKENS is off (a row written per turn that nothing needs)", async () => {
  const { execute } = measuringExecutor();
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, execute, {
    ...options,
    compaction: { contextTokens: null, summarize: countingSummarizer().summarize },
  });
  for (let n = 1; n <= 3; n++) await turn(sentinel, said(n));
  const rows = storage.db.prepare(`SELECT count(*) AS n FROM context_size`).get() as { n: number };
  assertEquals(rows.n, 0);
});

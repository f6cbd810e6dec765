// Unit tests of when a turn settles its tokens with its sender's access record: after its reply is sent, never beside it (a new sender's record is a new object), in a task after its caller is told; Deno.
import { assertEquals } from "@std/assert";
import type { ReplyChannel } from "../chat/mod.ts";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** A channel that writes each send into `log`, as the settlements are. */
function loggingChannel(log: string[]): ReplyChannel {
  return {
    split: (_target, text) => [text],
    send: (_target, text, part) => {
      part.leaving?.();
      log.push(`sent ${text}`);
      return Promise.resolve({ ok: true });
    },
    inDoubt: () => Promise.resolve("resend_marked"),
  };
}

/** Resolves in a task after those already due: the settlement's (a 0 ms timer) has run. */
function _nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("TurnRunner settles a chat turn's tokens only after its reply is sent", async () => {
  const log: string[] = [];
  const sentinel = new SessionSentinel(sqliteStorage(), recordingExecutor().execute, {
    ...options,
    channel: loggingChannel(log),
    spend: {
      sessionTokensPerDay: null,
      turnReserve: 1_000,
      settle: (message) => {
        log.push(`settled ${message.spend?.key}`);
        return Promise.resolve();
      },
    },
  });
  const receipt = await sentinel.submit({
    ...msg("hi", "d-1"),
    reply: { platform: "telegram", chat_id: 1 },
    spend: { record: "sender:telegram:1", key: "d-1" },
  });
  await sentinel.drain();
  assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
  await _nextTask();
  // The settlement calls the sender's record, a new Durable Object for a new sender: started
  // beside the reply's send, its creation delayed the reply of every first message.
  assertEquals(log, ["sent re: hi", "settled d-1"]);
});

Deno.test("TurnRunner settles a turn without a reply target once, in a task after its caller is told", async () => {
  const settled: string[] = [];
  const sentinel = new SessionSentinel(sqliteStorage(), recordingExecutor().execute, {
    ...options,
    spend: {
      sessionTokensPerDay: null,
      turnReserve: 1_000,
      settle: (message) => {
        settled.push(message.spend?.key ?? "");
        return Promise.resolve();
      },
    },
  });
  const receipt = await sentinel.submit({
    ...msg("hi", "d-2"),
    spend: { record: "apiuser:t:u", key: "d-2" },
  });
  // The caller waiting for the outcome (an API request) answers in the task that tells it: a
  // settlement begun there held that answer's body back in workerd (issue 32).
  const told = sentinel.outcome(receipt.seq).then((outcome) => ({
    status: outcome.status,
    settledWhenTold: [...settled],
  }));
  await sentinel.drain();
  assertEquals(await told, { status: "completed", settledWhenTold: [] });
  await _nextTask();
  assertEquals(settled, ["d-2"]);
});

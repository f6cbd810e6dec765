// Unit tests for lib/session/session_sentinel.ts: replies and notices through the outbox, across crashes; Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { type InDoubt, parseCommand, type ReplyChannel, RESEND_NOTE } from "../chat/mod.ts";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/**
 * A reply of three parts whose second send is cut off by a crash (the request left, no answer was
 * recorded), then a new sentinel on the same storage whose channel resolves the part in doubt as
 * `way` says. Returns what reached the chat, and what the channel was asked about.
 */
async function crashMidPart(way: InDoubt) {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const asked: { index: number; marker?: string }[] = [];
  const cutOff = Promise.withResolvers<void>();
  const channel = (dies: boolean): ReplyChannel => ({
    split: (_target, text) => [`${text} 1`, `${text} 2`, `${text} 3`],
    send: (_target, text, part) => {
      part.leaving?.();
      if (dies && text.endsWith(" 2")) {
        cutOff.resolve();
        return new Promise<never>(() => {}); // the process dies while the request is out
      }
      sent.push(text);
      return Promise.resolve({ ok: true as const });
    },
    inDoubt: (_target, part) => {
      asked.push({ index: part.index, marker: part.marker });
      return Promise.resolve(way);
    },
  });
  const message = { ...msg("hi"), reply: { platform: "telegram", chat_id: 1 } };
  const before = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: channel(true),
  });
  const receipt = await before.submit(message);
  void before.drain();
  await cutOff.promise;
  assertEquals(sent, ["re: hi 1"]);
  const after = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: channel(false),
  });
  await after.drain();
  assertEquals((await after.outcome(receipt.seq)).status, "completed");
  assertEquals(after.snapshot().running, false);
  return { sent, asked };
}

Deno.test("SessionSentinel resolves a part cut off by a crash the way its channel says, and only that part", async () => {
  const marked = await crashMidPart("resend_marked");
  assertEquals(marked.sent, ["re: hi 1", `${RESEND_NOTE}re: hi 2`, "re: hi 3"]);
  assertEquals(marked.asked.length, 1);
  assertEquals(marked.asked[0].index, 1);
  assertMatch(marked.asked[0].marker ?? "", /^o[0-9]+-[0-9a-z]+$/);
  assertEquals((await crashMidPart("resend")).sent, ["re: hi 1", "re: hi 2", "re: hi 3"]);
  assertEquals((await crashMidPart("delivered")).sent, ["re: hi 1", "re: hi 3"], "never twice");
  assertEquals((await crashMidPart("skip")).sent, ["re: hi 1", "re: hi 3"]);
});

Deno.test("SessionSentinel resends a part after a crash during a 429 wait: nothing was posted", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const waiting = Promise.withResolvers<void>();
  const message = { ...msg("hi"), reply: { platform: "telegram", chat_id: 1 } };
  const before = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: {
      split: (_target, text) => [text],
      inDoubt: () => Promise.resolve("resend_marked"),
      send: (_target, _text, part) => {
        part.leaving?.();
        setTimeout(() => waiting.resolve(), 10);
        return Promise.resolve({
          ok: false,
          status: 429,
          retryable: true,
          retryAfterMs: 60_000,
          message: "429",
        });
      },
    },
  });
  const receipt = await before.submit(message);
  void before.drain();
  await waiting.promise; // the process dies during the Retry-After wait

  const after = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  await after.drain();
  assertEquals(sent, ["re: hi"]);
  assertEquals((await after.outcome(receipt.seq)).status, "completed");
});

Deno.test("SessionSentinel keeps a part in doubt when its resend is answered 429 and the process dies in the wait", async () => {
  const storage = sqliteStorage();
  const message = { ...msg("hi"), reply: { platform: "telegram", chat_id: 1 } };
  // 1: the send leaves and the process dies before its answer is recorded: the part is in doubt.
  const cutOff = Promise.withResolvers<void>();
  const first = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: {
      split: (_target, text) => [text],
      inDoubt: () => Promise.resolve("resend_marked"),
      send: (_target, _text, part) => {
        part.leaving?.();
        cutOff.resolve();
        return new Promise<never>(() => {});
      },
    },
  });
  const receipt = await first.submit(message);
  void first.drain();
  await cutOff.promise;
  // 2: the marked resend is answered 429 (this attempt posted nothing), and the process dies in
  // the wait: the first send may still have arrived.
  const waiting = Promise.withResolvers<void>();
  const second = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: {
      split: (_target, text) => [text],
      inDoubt: () => Promise.resolve("resend_marked"),
      send: (_target, _text, part) => {
        part.leaving?.();
        setTimeout(() => waiting.resolve(), 10);
        return Promise.resolve({
          ok: false,
          status: 429,
          retryable: true,
          retryAfterMs: 60_000,
          message: "429",
        });
      },
    },
  });
  void second.drain();
  await waiting.promise;
  // 3: still in doubt, so resent behind the note, never as if it had never been sent.
  const sent: string[] = [];
  const third = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  await third.drain();
  assertEquals(sent, [`${RESEND_NOTE}re: hi`]);
  assertEquals((await third.outcome(receipt.seq)).status, "completed");
});

Deno.test("SessionSentinel.submit() sends a chat user's command answer through the outbox once, never for a repeat", async () => {
  const sent: string[] = [];
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  const help = {
    ...msg("/help", "d-help"),
    command: parseCommand("/help"),
    reply: { platform: "telegram" },
  };
  await sentinel.submit(help);
  await sentinel.submit(help);
  await new Promise((r) => setTimeout(r, 5));
  assertEquals(sent.length, 1);
  assertStrictEquals(sent[0].startsWith("Commands:"), true);
  const rows = storage.db.prepare(`SELECT kind, sent_at IS NOT NULL AS sent FROM outbox`).all();
  assertEquals(rows.map((r) => ({ ...r })), [{ kind: "notice", sent: 1 }], "recorded as sent");
});

/** Delivers one reply whose first send is answered with a 5xx (the post may or may not exist). */
async function fiveHundredOnce(way: InDoubt) {
  const sent: string[] = [];
  const asked: number[] = [];
  let calls = 0;
  const channel: ReplyChannel = {
    split: (_target, text) => [text],
    send: (_target, text, part) => {
      part.leaving?.();
      if (calls++ === 0) {
        return Promise.resolve({
          ok: false,
          status: 502,
          retryable: false,
          uncertain: true,
          message: "502",
        });
      }
      sent.push(text);
      return Promise.resolve({ ok: true });
    },
    inDoubt: (_target, part) => {
      asked.push(part.index);
      return Promise.resolve(way);
    },
  };
  const sentinel = new SessionSentinel(sqliteStorage(), recordingExecutor().execute, {
    ...options,
    channel,
  });
  const receipt = await sentinel.submit({
    ...msg("hi"),
    reply: { platform: "telegram", chat_id: 1 },
  });
  await sentinel.drain();
  assertEquals((await sentinel.outcome(receipt.seq)).status, "completed");
  return { sent, asked };
}

Deno.test("SessionSentinel resolves a part answered 5xx like a part in doubt: looked for, or resent (marked where it cannot look)", async () => {
  assertEquals(await fiveHundredOnce("delivered"), { sent: [], asked: [0] });
  assertEquals(await fiveHundredOnce("resend"), { sent: ["re: hi"], asked: [0] });
  assertEquals(await fiveHundredOnce("resend_marked"), {
    sent: [`${RESEND_NOTE}re: hi`],
    asked: [0],
  });
  assertEquals(await fiveHundredOnce("skip"), { sent: [], asked: [0] });
});

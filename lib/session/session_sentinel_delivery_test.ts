// Unit tests for lib/session/session_sentinel.ts: replies and notices through the outbox, across crashes; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

Deno.test("SessionSentinel resumes a reply cut off by a crash without resending the part in doubt", async () => {
  const storage = sqliteStorage();
  const sent: string[] = [];
  const cutOff = Promise.withResolvers<void>();
  const channel = (dies: boolean) => ({
    split: (_target: unknown, text: string) => [`${text} 1`, `${text} 2`, `${text} 3`],
    send: (_target: unknown, text: string) => {
      if (dies && text.endsWith(" 2")) {
        cutOff.resolve();
        return new Promise<never>(() => {}); // the process dies while the request is out
      }
      sent.push(text);
      return Promise.resolve({ ok: true as const });
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
  assertEquals(sent, ["re: hi 1", "re: hi 3"], "part 2 may have been posted: never twice");
  assertEquals((await after.outcome(receipt.seq)).status, "completed");
  assertEquals(after.snapshot().running, false);
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
      send: () => {
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

Deno.test("SessionSentinel.submit() sends a chat user's command answer through the outbox once, never for a repeat", async () => {
  const sent: string[] = [];
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    channel: recordingChannel(sent),
  });
  const help = { ...msg("/help", "d-help"), commands: true, reply: { platform: "telegram" } };
  await sentinel.submit(help);
  await sentinel.submit(help);
  await new Promise((r) => setTimeout(r, 5));
  assertEquals(sent.length, 1);
  assertStrictEquals(sent[0].startsWith("Commands:"), true);
  const rows = storage.db.prepare(`SELECT kind, sent_at IS NOT NULL AS sent FROM outbox`).all();
  assertEquals(rows.map((r) => ({ ...r })), [{ kind: "notice", sent: 1 }], "recorded as sent");
});

// Unit tests for lib/session/message_admission.ts through SessionSentinel.submit(): the queue-full refusal and its throttled notice; Deno.
import { assertEquals } from "@std/assert";
import { QUEUE_FULL_NOTICE } from "../session_commands.ts";
import { SessionSentinel } from "./mod.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

Deno.test("MessageAdmission refuses every message over maxQueued but tells a chat one queue-full notice per 30 s", async () => {
  let now = 7_000_000;
  const exec = recordingExecutor();
  const slow = exec.hold("slow");
  const chatMsg = (text: string) => ({ ...msg(text), reply: { platform: "telegram", chat_id: 1 } });
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    maxQueued: 1,
    busyNotice: false,
    now: () => now,
  });
  await sentinel.submit(chatMsg("slow"));
  void sentinel.drain();
  while (exec.state.running === 0) await new Promise((r) => setTimeout(r, 1));
  assertEquals((await sentinel.submit(chatMsg("waits"))).refused, undefined);
  const receipts = [];
  for (let i = 0; i < 8; i++) receipts.push(await sentinel.submit(chatMsg(`m${i}`)));
  assertEquals(receipts.map((r) => r.refused), Array(8).fill("queue_full"));
  assertEquals(
    receipts.map((r) => r.notice),
    [QUEUE_FULL_NOTICE, ...Array(7).fill(undefined)],
    "8 refused messages in one chat: one notice",
  );
  now += 31_000;
  assertEquals((await sentinel.submit(chatMsg("later"))).notice, QUEUE_FULL_NOTICE);
  slow.resolve();
});

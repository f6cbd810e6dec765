// Unit tests for lib/session/message_admission.ts through SessionSentinel.submit(): the queue-full refusal and its throttled notice, delivery keys remembered past the inbox's day; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { QUEUE_FULL_NOTICE } from "../chat/mod.ts";
import { DEDUP_MS } from "./inbox.ts";
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

Deno.test("MessageAdmission remembers a delivery key for its keyMemoryMs past the inbox's day: a replay starts no second turn", async () => {
  const hour = 60 * 60 * 1000;
  const month = 30 * 24 * hour;
  let now = 7_000_000;
  const exec = recordingExecutor();
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, exec.execute, { ...options, now: () => now });
  // A Twilio SMS: signed with no time, so a captured copy verifies for ever.
  const sms = { ...msg("yes", "twilio:SM1"), keyMemoryMs: month };
  const plain = msg("plain", "tg:1");
  assertStrictEquals((await sentinel.submit(sms)).duplicate, false);
  assertStrictEquals((await sentinel.submit(plain)).duplicate, false);
  await sentinel.drain();
  // Past the inbox's day: its rows are pruned once a turn ends, their keys forgotten.
  now += DEDUP_MS + hour;
  await sentinel.submit(msg("a day later"));
  await sentinel.drain();
  assertEquals(await sentinel.submit(sms), { seq: 0, duplicate: true });
  assertStrictEquals((await sentinel.submit(plain)).duplicate, false, "no keyMemoryMs: a day");
  await sentinel.drain();
  assertEquals(exec.state.order, ["yes", "plain", "a day later", "plain"]);
  // Just inside the memory still a duplicate; past it the key is pruned with the rest.
  now += month - DEDUP_MS - 2 * hour;
  assertStrictEquals((await sentinel.submit(sms)).duplicate, true);
  now += 2 * hour;
  await sentinel.submit(msg("a month later"));
  await sentinel.drain();
  const kept = storage.db.prepare(`SELECT count(*) AS n FROM seen_delivery`).get() as { n: number };
  assertStrictEquals(kept.n, 0);
});

Deno.test("MessageAdmission takes a continuesAfter message only while turn N still ends the idle session's conversation", async () => {
  const exec = recordingExecutor();
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, options);
  const after = (text: string, seq: number) => ({ ...msg(text), continuesAfter: seq });
  const one = await sentinel.submit(msg("one"));
  assertStrictEquals(sentinel.endsConversation(one.seq), false, "not completed yet");
  await sentinel.drain();
  assertStrictEquals(sentinel.endsConversation(one.seq), true);
  const two = await sentinel.submit(after("two", one.seq));
  assertEquals(two.refused, undefined, "turn 1 ends the conversation: taken");
  assertEquals(
    (await sentinel.submit(after("queued behind two", two.seq))).refused,
    "history_mismatch",
    "a message waits: the session is not idle",
  );
  await sentinel.drain();
  assertEquals(exec.state.histories.at(-1), [
    { role: "user", content: "one" },
    { role: "assistant", content: "re: one" },
  ]);
  assertStrictEquals(sentinel.endsConversation(one.seq), false);
  assertEquals((await sentinel.submit(after("branch", one.seq))).refused, "history_mismatch");
  assertEquals((await sentinel.submit(after("unknown", 999))).refused, "history_mismatch");
  sentinel.control("reset");
  assertStrictEquals(sentinel.endsConversation(two.seq), false, "a reset ends the conversation");
  assertEquals((await sentinel.submit(after("after reset", two.seq))).refused, "history_mismatch");
  assertEquals(exec.state.order, ["one", "two"]);
});

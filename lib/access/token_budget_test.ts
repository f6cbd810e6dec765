// Unit tests of the daily token budget in an access record: reservations, settlement, one notice per day; Deno.
import { assert, assertEquals } from "@std/assert";
import { dayUsage, nextUtcMidnight, reserveTokens, settleTokens, utcDay } from "./token_budget.ts";
import { admitToRecord } from "./sender_record.ts";
import { memoryRecordStorage } from "./_memory_record_storage.ts";

const T0 = Date.UTC(2027, 0, 15, 12, 0, 0);

Deno.test("reserveTokens() admits 50 turns at once only as far as the day's budget allows", () => {
  const record = memoryRecordStorage();
  const limit = 1_000;
  const verdicts = Array.from(
    { length: 50 },
    (_, i) => reserveTokens(record, { limit, estimate: 300, key: `m${i}` }, T0),
  );
  assertEquals(verdicts.filter((v) => v.kind === "admitted").length, 3);
  // The first refusal notifies, the rest of the day's are silent; all say when it resets.
  const over = verdicts.filter((v) => v.kind === "over_budget");
  assertEquals(over.filter((v) => v.kind === "over_budget" && v.notify).length, 1);
  assert(over.every((v) => v.kind === "over_budget" && v.resetAt === nextUtcMidnight(T0)));
  assertEquals(dayUsage(record, utcDay(T0)).reserved_tokens, 900);
});

Deno.test("settleTokens() replaces a reservation by the real usage, once", () => {
  const record = memoryRecordStorage();
  const limit = 1_000;
  assertEquals(reserveTokens(record, { limit, estimate: 600, key: "a" }, T0).kind, "admitted");
  assertEquals(reserveTokens(record, { limit, estimate: 600, key: "b" }, T0).kind, "over_budget");
  const used = { prompt_tokens: 80, completion_tokens: 20, cached_tokens: 40 };
  assert(settleTokens(record, "a", used, T0 + 1));
  assert(!settleTokens(record, "a", used, T0 + 2)); // a retried settlement counts nothing
  assertEquals(dayUsage(record, utcDay(T0)), {
    day: utcDay(T0),
    prompt_tokens: 80,
    completion_tokens: 20,
    cached_tokens: 40,
    total_tokens: 100,
    cost: 0,
    turns: 1,
    reserved_tokens: 0,
  });
  // Room again once the turn used less than it reserved; a redelivered key reserves once.
  assertEquals(reserveTokens(record, { limit, estimate: 600, key: "b" }, T0).kind, "admitted");
  assertEquals(reserveTokens(record, { limit, estimate: 600, key: "b" }, T0).kind, "admitted");
  assertEquals(dayUsage(record, utcDay(T0)).reserved_tokens, 600);
});

Deno.test("settleTokens() sums a turn that reserved nothing (no cap set) once, with its cost", () => {
  const record = memoryRecordStorage();
  const used = { prompt_tokens: 300, completion_tokens: 100, cost: 0.25 };
  assert(settleTokens(record, "free", used, T0));
  assert(!settleTokens(record, "free", used, T0 + 1)); // a retried settlement counts nothing
  assert(!settleTokens(record, "idle", { prompt_tokens: 0, completion_tokens: 0 }, T0));
  const day = dayUsage(record, utcDay(T0));
  assertEquals([day.total_tokens, day.turns, day.cost, day.reserved_tokens], [400, 1, 0.25, 0]);
});

Deno.test("reserveTokens() starts afresh the next UTC day, with one notice per day", () => {
  const record = memoryRecordStorage();
  const limit = 100;
  reserveTokens(record, { limit, estimate: 100, key: "a" }, T0);
  const over = reserveTokens(record, { limit, estimate: 100, key: "b" }, T0);
  assert(over.kind === "over_budget" && over.notify);
  const tomorrow = nextUtcMidnight(T0);
  // The lost turn's reservation counted for its own day only.
  assertEquals(
    reserveTokens(record, { limit, estimate: 100, key: "c" }, tomorrow).kind,
    "admitted",
  );
  const again = reserveTokens(record, { limit, estimate: 100, key: "d" }, tomorrow);
  assert(again.kind === "over_budget" && again.notify);
});

Deno.test("admitToRecord() refuses a turn over its token budget without counting it in the quota", () => {
  const record = memoryRecordStorage();
  const ask = (key: string) =>
    admitToRecord(record, {
      needsPairing: false,
      refusal: "silence",
      name: "",
      quota: { limit: 10, windowMs: 60_000 },
      tokens: { limit: 500, estimate: 200 },
      deliveryKey: key,
      now: T0,
    });
  assertEquals(ask("a").kind, "admitted");
  assertEquals(ask("b").kind, "admitted");
  const third = ask("c");
  assert(third.kind === "over_budget" && third.notify);
  assertEquals((record.get<unknown[]>("turns") ?? []).length, 2);
  assertEquals(ask("a").kind, "admitted"); // a redelivery
});

Deno.test("settleTokens() writes two rows per turn: the day past retention is dropped on a day's first turn only", () => {
  const record = memoryRecordStorage();
  const writes: string[] = [];
  const counted = {
    ...record,
    put: (key: string, value: unknown) => (writes.push(`put ${key}`), record.put(key, value)),
    delete: (key: string) => (writes.push(`delete ${key}`), record.delete(key)),
  };
  const day = 86_400_000;
  const old = utcDay(T0 - 62 * day);
  record.put(`usage:${old}`, {
    prompt_tokens: 1,
    completion_tokens: 1,
    cached_tokens: 0,
    turns: 1,
  });
  const used = { prompt_tokens: 10, completion_tokens: 5 };
  assert(settleTokens(counted, "t1", used, T0));
  assertEquals(record.keys().includes(`usage:${old}`), false, "dropped on the day's first turn");
  writes.length = 0;
  for (let i = 2; i <= 4; i++) assert(settleTokens(counted, `t${i}`, used, T0 + i));
  // Each a key-value row written, billed: the settled keys and the day's sums, nothing more.
  assertEquals(writes, Array(3).fill(["put budget_settled", `put usage:${utcDay(T0)}`]).flat());
  assertEquals(dayUsage(record, utcDay(T0)).turns, 4);
});

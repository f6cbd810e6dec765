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

// A record whose reads and writes are listed, as a Durable Object bills them (rows read, rows written).
function countedRecord() {
  const record = memoryRecordStorage();
  const calls: string[] = [];
  const counted = {
    ...record,
    get: <T>(key: string) => (calls.push(`get ${key}`), record.get<T>(key)),
    put: (key: string, value: unknown) => (calls.push(`put ${key}`), record.put(key, value)),
    delete: (key: string) => (calls.push(`delete ${key}`), record.delete(key)),
  };
  return { record, counted, calls };
}

Deno.test("settleTokens() writes one row per turn: the day past retention is dropped on a day's first turn only", () => {
  const { record, counted, calls } = countedRecord();
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
  calls.length = 0;
  for (let i = 2; i <= 4; i++) assert(settleTokens(counted, `t${i}`, used, T0 + i, false));
  // A turn that reserved nothing: one read and one write (a billed row) of the day's row, which
  // holds the day's sums and the keys it settled, nothing more.
  const today = `usage:${utcDay(T0)}`;
  assertEquals(calls, Array(3).fill([`get ${today}`, `put ${today}`]).flat());
  assertEquals(dayUsage(record, utcDay(T0)).turns, 4);
});

Deno.test("settleTokens() settles a reservation in two reads and two writes: the reservations and the day's row", () => {
  const { record, counted, calls } = countedRecord();
  const used = { prompt_tokens: 10, completion_tokens: 5 };
  assert(settleTokens(counted, "t0", used, T0)); // the day's row exists
  reserveTokens(record, { limit: 1_000, estimate: 100, key: "t1" }, T0);
  calls.length = 0;
  assert(settleTokens(counted, "t1", used, T0 + 1));
  const today = `usage:${utcDay(T0)}`;
  assertEquals(calls.sort(), [
    "get budget_held",
    `get ${today}`,
    "put budget_held",
    `put ${today}`,
  ]);
  calls.length = 0;
  assert(!settleTokens(counted, "t1", used, T0 + 2)); // retried: counted once
  assertEquals(calls.filter((c) => c.startsWith("put")), []);
  assertEquals(dayUsage(record, utcDay(T0)).turns, 2);
});

Deno.test("settleTokens() counts a turn once when its settlement is retried across UTC midnight", () => {
  const record = memoryRecordStorage();
  const midnight = nextUtcMidnight(T0);
  const used = { prompt_tokens: 10, completion_tokens: 5 };
  const [before, after] = [utcDay(midnight - 1), utcDay(midnight)];
  // No cap: counted on the day it settled; its retry seconds later, in the next day, counts nothing.
  assert(settleTokens(record, "free", used, midnight - 1_000, false));
  assert(!settleTokens(record, "free", used, midnight + 5_000, false));
  assert(!settleTokens(record, "free", used, midnight + 5_000));
  // Reserved before midnight, settled after: counted on the day it reserved, once.
  reserveTokens(record, { limit: 1_000, estimate: 100, key: "capped" }, midnight - 2_000);
  assert(settleTokens(record, "capped", used, midnight + 1_000));
  assert(!settleTokens(record, "capped", used, midnight + 6_000));
  assertEquals([dayUsage(record, before).turns, dayUsage(record, after).turns], [2, 0]);
  assertEquals(dayUsage(record, before).reserved_tokens, 0);
});

Deno.test("settleTokens() honours the settled keys an older version kept in budget_settled, then drops them", () => {
  const record = memoryRecordStorage();
  const used = { prompt_tokens: 10, completion_tokens: 5 };
  const today = `usage:${utcDay(T0)}`;
  // As the old shape left it: the day's sums without keys, the keys in a list of their own.
  record.put(today, { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, turns: 1 });
  record.put("budget_settled", ["before-deploy"]);
  assert(!settleTokens(record, "before-deploy", used, T0)); // its retry after the deploy
  assert(settleTokens(record, "after-deploy", used, T0 + 1));
  assertEquals(record.keys().includes("budget_settled"), false, "carried into the day's row");
  assert(!settleTokens(record, "before-deploy", used, T0 + 2, false));
  assert(!settleTokens(record, "after-deploy", used, T0 + 3, false));
  assertEquals(dayUsage(record, utcDay(T0)).turns, 2);
});

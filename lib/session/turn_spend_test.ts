// Unit tests of a turn's tokens in its session: counted from its model events, summed per day, SESSION_TOKENS_PER_DAY checked before the turn; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { SessionStores } from "./session_stores.ts";
import { utcDay } from "./session_usage.ts";
import { BUDGET_EXCEEDED, countingTokens, noTokens, sessionBudgetRefusal } from "./turn_spend.ts";

const T0 = Date.UTC(2027, 0, 15, 12);

Deno.test("countingTokens() adds every model.completed event's tokens and passes each event on", () => {
  const seen: string[] = [];
  const spent = noTokens();
  const emit = countingTokens((type) => seen.push(type), spent);
  emit("model.completed", { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 });
  emit("tool.started", { tool: "x" });
  emit("model.completed", { prompt_tokens: 150, completion_tokens: 30 });
  assertEquals(spent, { prompt_tokens: 250, completion_tokens: 50, cached_tokens: 60 });
  assertEquals(seen, ["model.completed", "tool.started", "model.completed"]);
});

Deno.test("sessionBudgetRefusal() refuses a turn whose reserve would pass SESSION_TOKENS_PER_DAY, until the next UTC day", () => {
  const stores = new SessionStores(sqliteStorage(), () => T0);
  const options = { sessionTokensPerDay: 1_000, turnReserve: 300 };
  assertStrictEquals(sessionBudgetRefusal(stores, options, T0), null);
  stores.db.transaction((tx) => {
    stores.usage.add(tx, utcDay(T0), {
      prompt_tokens: 500,
      completion_tokens: 200,
      cached_tokens: 0,
    });
  });
  assertStrictEquals(sessionBudgetRefusal(stores, options, T0), null); // 700 + 300 fits
  stores.db.transaction((tx) => {
    stores.usage.add(tx, utcDay(T0), { prompt_tokens: 1, completion_tokens: 0, cached_tokens: 0 });
  });
  const refused = sessionBudgetRefusal(stores, options, T0);
  assertStrictEquals(refused?.status === "failed" && refused.error.type, BUDGET_EXCEEDED);
  assertStrictEquals(sessionBudgetRefusal(stores, options, T0 + 12 * 3_600_000), null);
  assertEquals(stores.usage.day(utcDay(T0)).turns, 2);
  assertStrictEquals(sessionBudgetRefusal(stores, undefined, T0), null); // no cap: no check
});

Deno.test("SessionUsageStore.noticeDue() is true once per UTC day: one SESSION_TOKENS_PER_DAY notice a day", () => {
  const stores = new SessionStores(sqliteStorage(), () => T0);
  const day = utcDay(T0);
  const due = () => stores.db.transaction((tx) => stores.usage.noticeDue(tx, day));
  assertStrictEquals(due(), true);
  assertStrictEquals(due(), false);
  assertStrictEquals(
    stores.db.transaction((tx) => stores.usage.noticeDue(tx, utcDay(T0 + 86_400_000))),
    true,
  );
  assertEquals(stores.usage.day(day).turns, 0); // a notice is no turn
});

Deno.test("countingTokens() adds each call's cost at its own model's MODEL_PRICES", () => {
  const spent = noTokens();
  const prices = { a: { in: 1, out: 2 }, b: { in: 10, out: 20 } };
  const emit = countingTokens(() => {}, spent, prices);
  emit("model.completed", { model: "a", prompt_tokens: 1_000_000, completion_tokens: 0 });
  emit("model.completed", { model: "b", prompt_tokens: 0, completion_tokens: 100_000 });
  emit("model.completed", { model: "unpriced", prompt_tokens: 5, completion_tokens: 5 });
  assertStrictEquals(spent.cost, 1 + 2);
});

// Unit tests of MODEL_PRICES parsing and pricing; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { callCost, parseModelPrices, roundCost } from "./model_prices.ts";

Deno.test("parseModelPrices() keeps well-formed entries and drops malformed ones", () => {
  const prices = parseModelPrices(
    JSON.stringify({
      "gpt-4o-mini": { in: 0.15, out: 0.6, cached: 0.075 },
      bad: { in: "x", out: 1 },
      "*": { in: 1, out: 2 },
    }),
  );
  assertEquals(prices, {
    "gpt-4o-mini": { in: 0.15, out: 0.6, cached: 0.075 },
    "*": { in: 1, out: 2 },
  });
  assertStrictEquals(parseModelPrices(""), null);
  assertStrictEquals(parseModelPrices("not json"), null);
  assertStrictEquals(parseModelPrices("[1]"), null);
});

Deno.test("callCost() prices uncached, cached and completion tokens per million", () => {
  const prices = parseModelPrices('{"m":{"in":2,"out":8,"cached":0.5}}');
  const cost = callCost(prices, "m", {
    prompt_tokens: 1_000_000,
    completion_tokens: 500_000,
    cached_tokens: 400_000,
  });
  // 600k fresh × 2 + 400k cached × 0.5 + 500k × 8, per million
  assertStrictEquals(roundCost(cost), 1.2 + 0.2 + 4);
  assertStrictEquals(callCost(prices, "other", { prompt_tokens: 10, completion_tokens: 10 }), 0);
  assertStrictEquals(callCost(null, "m", { prompt_tokens: 10, completion_tokens: 10 }), 0);
  const star = parseModelPrices('{"*":{"in":1,"out":1}}');
  assertStrictEquals(callCost(star, "any", { prompt_tokens: 1e6, completion_tokens: 0 }), 1);
});

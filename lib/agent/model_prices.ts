// MODEL_PRICES: per-model prices per million tokens, and the money a model call's tokens cost at them; runtime-neutral.

/** One model's prices per million tokens: prompt (`in`), completion (`out`), cached prompt. */
export interface ModelPrice {
  in: number;
  out: number;
  /** Prompt tokens the provider served from its cache; absent: priced as `in`. */
  cached?: number;
}

/** Prices by model name; the key `*` prices any model not named. */
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

/**
 * Reads `MODEL_PRICES` (JSON, e.g. `{"gpt-4o-mini":{"in":0.15,"out":0.6,"cached":0.075}}`): an
 * entry whose prices are not finite numbers ≥ 0 is left out (its model's calls then cost
 * nothing, as an unpriced model's do), so one typo never stops the deployment. Empty: null.
 */
export function parseModelPrices(raw: unknown): ModelPrices | null {
  if (typeof raw !== "string" || !raw.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const prices: Record<string, ModelPrice> = {};
  for (const [model, value] of Object.entries(parsed as Record<string, unknown>)) {
    const entry = value as Record<string, unknown> | null;
    if (!entry || typeof entry !== "object") continue;
    const [inP, outP, cached] = [entry.in, entry.out, entry.cached];
    if (!_price(inP) || !_price(outP) || (cached !== undefined && !_price(cached))) continue;
    prices[model] = { in: inP, out: outP, ...(cached !== undefined ? { cached } : {}) };
  }
  return Object.keys(prices).length ? prices : null;
}

/**
 * What one model call's tokens cost at `prices` (in the prices' currency): uncached prompt tokens
 * at `in`, cached ones at `cached` (else `in`), completion tokens at `out`. Zero for a model with
 * no price (nor a `*` one).
 */
export function callCost(
  prices: ModelPrices | null,
  model: string | undefined,
  tokens: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number },
): number {
  const price = prices ? (model !== undefined && prices[model]) || prices["*"] : undefined;
  if (!price) return 0;
  const cached = Math.min(tokens.cached_tokens ?? 0, tokens.prompt_tokens);
  const fresh = tokens.prompt_tokens - cached;
  return (fresh * price.in + cached * (price.cached ?? price.in) +
    tokens.completion_tokens * price.out) / 1_000_000;
}

/** Money rounded for display and JSON: six decimals (a millionth of the currency unit). */
export function roundCost(cost: number): number {
  return Math.round(cost * 1_000_000) / 1_000_000;
}

function _price(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

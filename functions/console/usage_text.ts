// How the console words spend: token counts and money (MODEL_PRICES' unit, per million tokens), and today's UTC day; browser and Deno.

/** A day's figures as `GET /v1/usage` answers them (totals, a session's row). */
export interface UsageFigures {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  total_tokens: number;
  cost: number;
  turns: number;
}

/** A token count with thousands separated: "1,234,567". */
export function tokensText(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A cost in MODEL_PRICES' unit, as `/usage` writes it: 4 decimals, 6 under a cent. */
export function costText(cost: number): string {
  return cost > 0 && cost < 0.01 ? cost.toFixed(6) : cost.toFixed(4);
}

/** The UTC day of `at` (epoch ms) as YYYY-MM-DD: usage is summed per UTC day. */
export function utcDayText(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

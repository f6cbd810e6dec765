// A turn's tokens as its session counts them: summed from its model calls' events, checked against SESSION_TOKENS_PER_DAY before it starts, settled with the access record that reserved them; runtime-neutral.
import { type UsageCounts, utcDay } from "./session_usage.ts";
import { callCost, type ModelPrices } from "../agent/model_prices.ts";
import type { SessionStores } from "./session_stores.ts";
import type { InboundMessage, TurnOutcome } from "./types.ts";

/** The session's side of the spend caps (`TurnRunnerOptions.spend`). */
export interface TurnSpendOptions {
  /** `SESSION_TOKENS_PER_DAY`; null: none. */
  sessionTokensPerDay: number | null;
  /** What a turn is expected to use at most (`TURN_MAX_TOKENS`, else a default). */
  turnReserve: number;
  /** `MODEL_PRICES`: each call's cost is summed with its tokens; absent or null: tokens only. */
  prices?: ModelPrices | null;
  /**
   * Settles the reservation `message.spend` names with what its turn used (the sender's or the
   * tenant's access record); called once the turn is stored, only for a message that reserved.
   */
  settle?: (message: InboundMessage, used: UsageCounts) => Promise<void>;
}

/** The failed outcome's `error.type` when a daily token cap stops a turn before its model call. */
export const BUDGET_EXCEEDED = "budget_exceeded";

/** Zeroed counts, added to by `countingTokens`. */
export function noTokens(): UsageCounts {
  return { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 };
}

/**
 * Wraps a run's event recorder so that every `model.completed` event's tokens are added to
 * `spent` as well: a turn's usage whatever its end (a failure or a stop after some calls too).
 * With `prices`, each call's cost at its own model's price is added to `spent.cost`.
 */
export function countingTokens(
  emit: (type: string, data: Record<string, unknown>) => void,
  spent: UsageCounts,
  prices: ModelPrices | null = null,
): (type: string, data: Record<string, unknown>) => void {
  return (type, data) => {
    if (type === "model.completed") {
      const call = {
        prompt_tokens: _n(data.prompt_tokens),
        completion_tokens: _n(data.completion_tokens),
        cached_tokens: _n(data.cached_tokens),
      };
      spent.prompt_tokens += call.prompt_tokens;
      spent.completion_tokens += call.completion_tokens;
      spent.cached_tokens += call.cached_tokens;
      if (prices) {
        const model = typeof data.model === "string" ? data.model : undefined;
        spent.cost = (spent.cost ?? 0) + callCost(prices, model, call);
      }
    }
    emit(type, data);
  };
}

/**
 * The outcome of a turn that must not start because the session's tokens today plus the turn's
 * reserve would pass `SESSION_TOKENS_PER_DAY`; null when it may run (or no cap is set).
 */
export function sessionBudgetRefusal(
  stores: SessionStores,
  options: TurnSpendOptions | undefined,
  now: number,
): TurnOutcome | null {
  const cap = options?.sessionTokensPerDay ?? null;
  if (cap === null) return null;
  const used = stores.usage.day(utcDay(now)).total_tokens;
  if (used + options!.turnReserve <= cap) return null;
  return {
    status: "failed",
    error: {
      type: BUDGET_EXCEEDED,
      message: `this conversation reached its SESSION_TOKENS_PER_DAY (${cap}) for today; it ` +
        "resets at midnight UTC",
    },
  };
}

/** Whether the turn used any tokens (an unused reservation is settled too, to free it). */
export function usedAny(spent: UsageCounts): boolean {
  return spent.prompt_tokens + spent.completion_tokens > 0;
}

function _n(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

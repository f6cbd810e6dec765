// The Worker's side of the daily token caps: a session settling its turn's reservation with the access object that took it, and the API's 429 budget_exceeded; Workers.
import type { Context } from "hono";
import type { SpendConfig } from "../lib/deployment/config.ts";
import type { TurnSpendOptions } from "../lib/session/turn_spend.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { accessStub } from "./access_client.ts";
import type { App } from "./_http.ts";
import type { Env } from "./env.ts";

/**
 * Whether an API tenant's day's sums are the session directory's (`GET /v1/usage` sums its
 * sessions' rows there) rather than its access object's: with the `DIRECTORY` binding and no
 * `TENANT_TOKENS_PER_DAY`. Then no turn settles with the tenant's one object — every turn of a busy
 * tenant would reach that single object (lesson 4), and nothing needs its count before a turn. A
 * cap needs one count to reserve from: the tenant's object keeps it.
 */
export function tenantSumsInDirectory(env: Env, spend: SpendConfig): boolean {
  return env.DIRECTORY !== undefined && spend.tenantTokensPerDay === null;
}

/**
 * The session's spend options: `SESSION_TOKENS_PER_DAY` checked in the session, each call priced
 * at `MODEL_PRICES`, and each turn whose message names its user's or tenant's record
 * (`InboundMessage.spend`) settled with that access object once stored — one call after the
 * turn, off the message's path: its reservation where a cap took one, else the day's sums (an API
 * tenant's only where the directory does not keep them: `tenantSumsInDirectory`).
 */
export function sessionSpend(env: Env, spend: SpendConfig): TurnSpendOptions {
  const tenantSumsElsewhere = tenantSumsInDirectory(env, spend);
  return {
    sessionTokensPerDay: spend.sessionTokensPerDay,
    turnReserve: spend.turnReserve,
    prices: spend.modelPrices,
    async settle(message, used) {
      if (!message.spend) return;
      if (tenantSumsElsewhere && message.spend.record.startsWith("tenant:")) return;
      try {
        const { record, key, reserved } = message.spend;
        await accessStub(env, record).settleTokens(key, used, reserved);
      } catch (error) {
        // The reservation then counts for the rest of the day: over-counted, never under.
        log.warn("spend: a turn's token reservation was not settled", {
          error: errorText(error),
        });
      }
    },
  };
}

/**
 * The 429 `budget_exceeded` answer of an API turn over its tenant's `TENANT_TOKENS_PER_DAY`:
 * `Retry-After` (seconds) and `reset_at` (ISO time of the next UTC midnight) say when it resets.
 */
export function budgetExceeded(c: Context<App>, resetAt: number): Response {
  const limit = c.var.config.spend.tenantTokensPerDay;
  const seconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  c.header("Retry-After", String(seconds));
  return c.json({
    error: {
      message: `this API key's tenant is over TENANT_TOKENS_PER_DAY (${limit}) for today; it ` +
        "resets at reset_at (midnight UTC)",
      type: "budget_exceeded",
      reset_at: new Date(resetAt).toISOString(),
    },
  }, 429);
}

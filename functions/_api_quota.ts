// API_TURNS_PER_MINUTE: each API tenant's turn quota, counted in the tenant's own access object; Workers.
import type { Context, MiddlewareHandler } from "hono";
import { accessStub } from "./access_client.ts";
import { type App, jsonError, RequestError } from "./_http.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { budgetExceeded } from "./_spend.ts";
import type { TurnSpendRecord } from "../lib/session/mod.ts";

const _MINUTE_MS = 60_000;

/**
 * Counts one turn against the request's tenant's `API_TURNS_PER_MINUTE` (sliding minute); the
 * milliseconds until it may start one when it is over, else null. `deliveryKey` names a retry
 * of the same turn, counted once. Unset: no I/O.
 */
export async function overTurnQuota(c: Context<App>, deliveryKey: string): Promise<number | null> {
  const limit = c.var.config.apiTurnsPerMinute;
  if (limit === null) return null;
  const result = await accessStub(c.env, `tenant:${c.var.tenant.name}`).admit({
    needsPairing: false,
    refusal: "silence",
    name: "",
    quota: { limit, windowMs: _MINUTE_MS },
    deliveryKey,
    now: Date.now(),
  });
  return result.kind === "over_quota" ? result.retryAfterMs : null;
}

/**
 * Counts one turn against the request's tenant's `API_TURNS_PER_MINUTE`: the 429 `rate_limited`
 * answer with `Retry-After` when the tenant is over, else null (counted). `deliveryKey` as for
 * `overTurnQuota`.
 */
export async function turnQuotaRefusal(
  c: Context<App>,
  deliveryKey: string,
): Promise<Response | null> {
  const retryAfterMs = await overTurnQuota(c, deliveryKey);
  if (retryAfterMs === null) return null;
  const limit = c.var.config.apiTurnsPerMinute;
  c.header("Retry-After", String(Math.ceil(retryAfterMs / 1000)));
  return jsonError(
    c,
    429,
    `this API key's tenant is over API_TURNS_PER_MINUTE (${limit}); retry after the Retry-After seconds`,
    "rate_limited",
  );
}

/**
 * On a route that starts a turn, after `requireApiKey`: counts the request against its tenant's
 * `API_TURNS_PER_MINUTE` and answers 429 `rate_limited` with `Retry-After` when the tenant is
 * over. A retry with the same Idempotency-Key is counted once. A stream refused its slot
 * (`stream_limit`, before any turn) is given its turn back; with an Idempotency-Key the count
 * stays, for the retry that runs the turn (counted once).
 */
export const apiTurnQuota: MiddlewareHandler<App> = async (c, next) => {
  const key = c.req.header("idempotency-key");
  const deliveryKey = key ? `idem:${key}` : crypto.randomUUID();
  const tokenCap = c.var.config.spend.tenantTokensPerDay;
  if (tokenCap !== null) {
    // TENANT_TOKENS_PER_DAY: the turn reserves from its tenant's day (and counts in its minute)
    // in one call; its session settles the reservation once the turn is stored.
    const refusal = await _reserveTurn(c, deliveryKey, tokenCap);
    if (refusal) return refusal;
  } else {
    const refusal = await turnQuotaRefusal(c, deliveryKey);
    if (refusal) return refusal;
  }
  // The record the turn settles its tokens with after it ends: its reservation under a cap, else
  // the tenant's day's sums — unless the directory keeps those (`tenantSumsInDirectory`).
  _spends.set(c.req.raw, {
    record: `tenant:${c.var.tenant.name}`,
    key: deliveryKey,
    reserved: tokenCap !== null,
  });
  await next();
  // The route threw (the app answered it): `c.error`. Only this request's own key is given back —
  // a client's key may name an earlier turn, which must stay counted.
  const refused = c.error instanceof RequestError && c.error.type === "stream_limit";
  const counted = c.var.config.apiTurnsPerMinute !== null || tokenCap !== null;
  if (refused && !key && counted) {
    try {
      await accessStub(c.env, `tenant:${c.var.tenant.name}`).uncountTurn(deliveryKey);
    } catch (error) {
      // The refusal stands: the turn lapses from the tenant's minute on its own.
      log.warn("a refused stream's turn was not given back", { error: errorText(error) });
    }
  }
};

/** The reservations `apiTurnQuota` took, by request: the turn's message carries its own. */
const _spends = new WeakMap<Request, TurnSpendRecord>();

/**
 * The tenant record this request's turn settles its tokens with (`InboundMessage.spend`): its
 * reservation under `TENANT_TOKENS_PER_DAY`, else the tenant's day's sums; empty off a turn route.
 */
export function requestSpend(c: Context<App>): { spend?: TurnSpendRecord } {
  const spend = _spends.get(c.req.raw);
  return spend ? { spend } : {};
}

// One call to the tenant's object: its minute's quota (when set) and its day's token budget.
async function _reserveTurn(
  c: Context<App>,
  deliveryKey: string,
  tokenCap: number,
): Promise<Response | null> {
  const limit = c.var.config.apiTurnsPerMinute;
  const result = await accessStub(c.env, `tenant:${c.var.tenant.name}`).admit({
    needsPairing: false,
    refusal: "silence",
    name: "",
    quota: limit === null ? null : { limit, windowMs: _MINUTE_MS },
    tokens: { limit: tokenCap, estimate: c.var.config.spend.turnReserve },
    deliveryKey,
    now: Date.now(),
  });
  if (result.kind === "over_budget") return budgetExceeded(c, result.resetAt);
  if (result.kind !== "over_quota") return null;
  c.header("Retry-After", String(Math.ceil(result.retryAfterMs / 1000)));
  return jsonError(
    c,
    429,
    `this API key's tenant is over API_TURNS_PER_MINUTE (${limit}); retry after the Retry-After seconds`,
    "rate_limited",
  );
}

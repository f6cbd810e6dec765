// API_TURNS_PER_MINUTE: each API tenant's turn quota, counted in the tenant's own access object; Workers.
import type { MiddlewareHandler } from "hono";
import { accessStub } from "./access_client.ts";
import { type App, jsonError } from "./_http.ts";

const _MINUTE_MS = 60_000;

/**
 * On a route that starts a turn, after `requireApiKey`: counts the request against its tenant's
 * `API_TURNS_PER_MINUTE` (sliding minute) and answers 429 `rate_limited` with `Retry-After` when
 * the tenant is over. A retry with the same Idempotency-Key is counted once. Unset: no I/O.
 */
export const apiTurnQuota: MiddlewareHandler<App> = async (c, next) => {
  const limit = c.var.config.apiTurnsPerMinute;
  if (limit === null) return await next();
  const key = c.req.header("idempotency-key");
  const result = await accessStub(c.env, `tenant:${c.var.tenant.name}`).admit({
    needsPairing: false,
    refusal: "silence",
    name: "",
    quota: { limit, windowMs: _MINUTE_MS },
    deliveryKey: key ? `idem:${key}` : crypto.randomUUID(),
    now: Date.now(),
  });
  if (result.kind === "over_quota") {
    c.header("Retry-After", String(Math.ceil(result.retryAfterMs / 1000)));
    return jsonError(
      c,
      429,
      `this API key's tenant is over API_TURNS_PER_MINUTE (${limit}); retry after the Retry-After seconds`,
      "rate_limited",
    );
  }
  await next();
};

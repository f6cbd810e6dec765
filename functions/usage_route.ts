// GET /v1/usage: a UTC day's tokens (and cost at MODEL_PRICES) for the caller's tenant, one session, one chat user, or (admin keys) everyone; Workers (D1 for the per-session listing).
import type { Context } from "hono";
import { mayAddressSession } from "../lib/api/mod.ts";
import { roundCost } from "../lib/agent/model_prices.ts";
import { utcDay } from "../lib/access/token_budget.ts";
import type { UsageFigures } from "../lib/chat/usage_text.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { accessStub, senderStub } from "./access_client.ts";
import { type App, RequestError } from "./_http.ts";
import { sessionStub } from "./session_client.ts";
import { tenantSumsInDirectory } from "./_spend.ts";

/** Most sessions one answer lists (the day's largest first). */
const _MAX_SESSIONS = 500;
const _DEFAULT_SESSIONS = 100;

/** A day's sums, as every scope answers them. */
type _Totals = Omit<UsageFigures, "day">;

/** One session's row of the day, as the directory keeps it. */
interface _SessionRow extends _Totals {
  session_key: string;
  tenant: string | null;
  platform: string;
}

/**
 * `GET /v1/usage?day=YYYY-MM-DD` (default today, UTC). Without a filter: the caller's tenant's
 * totals and its sessions' rows of the day from the session directory (D1), largest first; the
 * totals from its own access record instead under `TENANT_TOKENS_PER_DAY` (whose reservations
 * settle there) or without the directory (no rows then).
 * `session=KEY`: that session's figures, from the session itself (another tenant's is a 404).
 * Admin keys see everyone: without a filter, every session's row and their sum; `tenant=NAME`
 * one tenant's; `user=platform:user` a chat user's, from their own record. No answer scans
 * every object: each is one record, one session, or one indexed D1 query.
 */
export async function usageRoute(c: Context<App>): Promise<Response> {
  const query = c.req.query();
  const day = query.day ?? utcDay(Date.now());
  if (!_isDay(day)) {
    throw new RequestError(400, "day: expected a UTC date as YYYY-MM-DD", "invalid_request_error");
  }
  const limit = query.limit === undefined ? _DEFAULT_SESSIONS : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > _MAX_SESSIONS) {
    throw new RequestError(
      400,
      `limit: expected a whole number from 1 to ${_MAX_SESSIONS}`,
      "invalid_request_error",
    );
  }
  const { tenant } = c.var;
  const filters = ["session", "user", "tenant"].filter((f) => query[f] !== undefined);
  if (filters.length > 1) {
    throw new RequestError(
      400,
      `filters: give one of session, user, tenant (got ${filters.join(", ")})`,
      "invalid_request_error",
    );
  }
  const base = { object: "usage", day };
  if (query.session !== undefined) {
    const key = query.session;
    // Another tenant's session is simply not found, as on /v1/sessions/{key}.
    if (!key || !mayAddressSession(tenant, key)) {
      throw new RequestError(404, "no such session", "not_found");
    }
    const [usage] = await sessionStub(c.env, key).usage([day], { session_key: key });
    return c.json({ ...base, session: key, totals: _totals(usage) });
  }
  if ((query.user !== undefined || query.tenant !== undefined) && !tenant.admin) {
    throw new RequestError(
      403,
      "the user and tenant filters need an admin key (ADMIN_API_KEYS); a tenant sees its own usage",
      "permission_denied",
    );
  }
  if (query.user !== undefined) {
    const [platform, ...rest] = query.user.split(":");
    const user = rest.join(":");
    if (!platform || !user) {
      throw new RequestError(400, "user: expected platform:user", "invalid_request_error");
    }
    const usage = await senderStub(c.env, { platform, user }).tokenUsage(day);
    return c.json({ ...base, user: `${platform}:${user}`, totals: _totals(usage) });
  }
  const scope = query.tenant ?? (tenant.admin ? null : tenant.name);
  const sessions = await _sessionRows(c, day, scope, limit);
  if (scope === null) {
    // Everyone's (an admin key): the sum of the day's session rows.
    if (!sessions) {
      throw new RequestError(
        503,
        "usage across tenants needs the session directory: add the DIRECTORY D1 binding (see docs/guides/session-directory.md)",
        "not_configured",
      );
    }
    return c.json({ ...base, scope: "all", totals: sessions.totals, sessions: sessions.rows });
  }
  // The tenant's sums: its sessions' rows where the directory keeps them (no turn settles with
  // the tenant's object then: `tenantSumsInDirectory`), else its own record.
  const totals = sessions && tenantSumsInDirectory(c.env, c.var.config.spend)
    ? sessions.totals
    : _totals(await accessStub(c.env, `tenant:${scope}`).tokenUsage(day));
  return c.json({
    ...base,
    tenant: scope,
    totals,
    ...(sessions ? { sessions: sessions.rows } : {}),
  });
}

/** The day's session rows (of `tenant`, or everyone's for null) and their sum; null without D1. */
async function _sessionRows(
  c: Context<App>,
  day: string,
  tenant: string | null,
  limit: number,
): Promise<{ rows: _SessionRow[]; totals: _Totals } | null> {
  const db = c.env.DIRECTORY;
  if (!db) return null;
  const where = tenant === null ? "day = ?1" : "day = ?1 AND tenant = ?2";
  const bindings = tenant === null ? [day] : [day, tenant];
  try {
    const [rows, sums] = await db.batch<Record<string, unknown>>([
      db.prepare(
        `SELECT key, tenant, platform, prompt_tokens, completion_tokens, cached_tokens, cost, turns
           FROM session_usage WHERE ${where}
           ORDER BY prompt_tokens + completion_tokens DESC, key LIMIT ${limit}`,
      ).bind(...bindings),
      db.prepare(
        `SELECT sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
                sum(cached_tokens) AS cached_tokens, sum(cost) AS cost, sum(turns) AS turns
           FROM session_usage WHERE ${where}`,
      ).bind(...bindings),
    ]);
    return {
      rows: rows.results.map((r) => ({
        session_key: String(r.key),
        tenant: r.tenant === null ? null : String(r.tenant),
        platform: String(r.platform),
        ..._totals(r),
      })),
      totals: _totals(sums.results[0] ?? {}),
    };
  } catch (error) {
    log.error("usage: the session directory was not read", { error: errorText(error) });
    throw new RequestError(503, "the session directory is unavailable; retry", "unavailable");
  }
}

function _totals(row: Record<string, unknown> | object): _Totals {
  const r = row as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const prompt = n(r.prompt_tokens);
  const completion = n(r.completion_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: n(r.cached_tokens),
    total_tokens: prompt + completion,
    cost: roundCost(n(r.cost)),
    turns: n(r.turns),
  };
}

function _isDay(day: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && utcDay(Date.parse(`${day}T00:00:00Z`) || 0) === day;
}

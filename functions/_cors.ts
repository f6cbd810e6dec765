// CORS for browser callers of the API: listed origins get hono's CORS headers, others' preflights a 403; Workers.
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { type App, jsonError } from "./_http.ts";

// What a browser client of the API sends and must read: the key, the JSON body, retries
// (Idempotency-Key), the session it continues; and back, the session it ran in and when to retry.
const _honoCors = cors({
  // Only reached for an allowed origin (see `corsPolicy`), so echoing it is the allowlist's answer.
  origin: (origin) => origin,
  allowMethods: ["GET", "POST", "DELETE"],
  allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "X-Session-Id"],
  exposeHeaders: ["X-Session-Id", "Retry-After"],
  maxAge: 600,
});

/** Whether `origin` is one of `allowed` (`CORS_ORIGINS`; `*` allows any). Origins compare case-insensitively. */
export function corsOriginAllowed(allowed: readonly string[], origin: string): boolean {
  const wanted = origin.toLowerCase();
  return allowed.some((entry) => entry === "*" || entry.toLowerCase() === wanted);
}

/**
 * The CORS policy of every route, from `CORS_ORIGINS`. A request from a listed origin gets hono's
 * CORS headers (a preflight is answered 204 here, before method and key checks, which a browser's
 * preflight carries nothing for). A preflight from any other origin is refused with a 403 JSON
 * error and no CORS headers; other requests pass without any, so the browser withholds the answer.
 * With no origins listed no response carries a CORS header.
 */
export const corsPolicy: MiddlewareHandler<App> = async (c, next) => {
  const allowed = c.var.config.corsOrigins;
  const origin = c.req.header("origin");
  if (origin !== undefined && corsOriginAllowed(allowed, origin)) return _honoCors(c, next);
  const preflight = c.req.method === "OPTIONS" && origin !== undefined &&
    c.req.header("access-control-request-method") !== undefined;
  if (preflight) {
    return jsonError(
      c,
      403,
      "this origin may not call the API from a browser (CORS_ORIGINS)",
      "cors_origin_not_allowed",
    );
  }
  await next();
  // The answer differs by Origin once origins are listed: a shared cache must not mix them up.
  if (allowed.length) c.header("Vary", "Origin", { append: true });
};

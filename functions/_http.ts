// Shared HTTP pieces of the route handlers: the app's types, JSON errors, body and parameter reading, API-key auth; Workers.
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { type ApiTenant, tenantOfKey } from "../lib/api/mod.ts";
import type { BatonConfig, Deployment } from "../lib/deployment/mod.ts";
import { parsePayload, setLogLevel, withSessionContext } from "../lib/runtime/mod.ts";
import { isStopped } from "../lib/session/mod.ts";
import { PayloadError, type WebhookAnswer } from "../lib/chat/mod.ts";
import type { Env } from "./env.ts";

/**
 * The hono environment of every route: the bindings, the config (read once per env), the
 * deployment the app was made for (its tools), and (behind `requireApiKey`) the API tenant the
 * request acts for.
 */
export type App = {
  Bindings: Env;
  Variables: { config: BatonConfig; deployment: Deployment; tenant: ApiTenant };
};

/** Largest request body accepted on any route. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A JSON error in the OpenAI shape `{"error":{"message","type"}}`. */
export function jsonError(
  c: Context,
  status: ContentfulStatusCode,
  message: string,
  type: string,
): Response {
  return c.json({ error: { message, type } }, status);
}

/** A request the handler refuses with a 4xx; thrown by the readers below, answered by the app. */
export class RequestError extends Error {
  constructor(readonly status: ContentfulStatusCode, message: string, readonly type: string) {
    super(message);
  }
}

/**
 * Parses `bytes` as JSON and validates it (`parsePayload`); a malformed body is a 400 naming the
 * field.
 */
export function parseJson<S extends z.ZodType>(schema: S, bytes: Uint8Array): z.infer<S> {
  try {
    return parsePayload(schema, bytes);
  } catch (error) {
    if (error instanceof PayloadError) {
      throw new RequestError(400, error.message, "invalid_request_error");
    }
    throw error;
  }
}

/** The `:key` route parameter as a session key (URL-decoded by hono), or a 400. */
export function sessionKeyParam(c: Context): string {
  const key = c.req.param("key");
  if (!key || key.length > 512) {
    throw new RequestError(400, "session key: invalid", "invalid_request_error");
  }
  return key;
}

/**
 * Requires `Authorization: Bearer <key>` with one of the deployment's API keys (`GATEWAY_API_KEY`,
 * `GATEWAY_API_KEYS`), each compared in constant time, and sets `c.var.tenant` to the key's tenant.
 */
export const requireApiKey: MiddlewareHandler<App> = async (c, next) => {
  const { apiKeys, adminTenants } = c.var.config;
  if (!apiKeys.length) {
    return jsonError(
      c,
      403,
      "the API is disabled: set GATEWAY_API_KEY (deployed: wrangler secret put GATEWAY_API_KEY; " +
        "locally: a line GATEWAY_API_KEY=<key> in .dev.vars, then restart npm start)",
      "not_configured",
    );
  }
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  const tenant = match ? await tenantOfKey(apiKeys, match[1].trim()) : null;
  if (tenant === null) return jsonError(c, 401, "missing or invalid API key", "invalid_api_key");
  c.set("tenant", { name: tenant, admin: adminTenants.includes(tenant) });
  await next();
};

/** Requires an admin tenant (`ADMIN_API_KEYS`); after `requireApiKey`. Others get 403. */
export const requireAdminTenant: MiddlewareHandler<App> = async (c, next) => {
  if (!c.var.tenant?.admin) {
    return jsonError(
      c,
      403,
      "this API key's tenant is not an admin (ADMIN_API_KEYS)",
      "permission_denied",
    );
  }
  await next();
};

/** The HTTP status for a turn that did not complete. */
export function failureStatus(error: { type: string }): ContentfulStatusCode {
  if (isStopped(error)) return 409;
  if (error.type === "turn_timeout") return 504;
  // Still too long after compacting (lib/session/compacted_turn.ts): as the provider says it.
  if (error.type === "context_length_exceeded") return 400;
  return 502;
}

/** A webhook's answer as a response: JSON, a typed text body (TwiML, a challenge), or an empty 204. */
export function webhookAnswer(c: Context<App>, answer: WebhookAnswer): Response {
  if (answer.status === 204) return c.body(null, 204);
  if (answer.contentType !== undefined) {
    return c.body(String(answer.body), answer.status as 200, {
      "content-type": answer.contentType,
    });
  }
  return c.json(answer.body, answer.status as 200);
}

/**
 * The one entry binding of a Worker request (an HTTP request, or a mail handed to the email app):
 * the deployment's config is read here (once per env: `Deployment.config`), the deployment set,
 * and the session context bound empty. A turn's own context is bound where the turn runs: in its
 * session object, by every RPC method and the alarm, from the fields the message carries.
 */
export function entryBinding(deployment: Deployment): MiddlewareHandler<App> {
  return (c, next) => {
    const config = deployment.config(c.env);
    setLogLevel(config.logLevel);
    c.set("config", config);
    c.set("deployment", deployment);
    return withSessionContext({}, config.contextDefaults, next);
  };
}

// Shared HTTP pieces of the route handlers: the app's types, JSON errors, body and parameter reading, API-key auth; Workers.
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { BatonConfig } from "../lib/config.ts";
import { parseJsonBody, PayloadError } from "../lib/platform.ts";
import { constantTimeEquals } from "../lib/platforms/_kit.ts";
import type { Env } from "./env.ts";

/** The hono environment of every route: the bindings, and the config read once per request. */
export type App = { Bindings: Env; Variables: { config: BatonConfig } };

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

/** Parses `bytes` as JSON (the one decoder, `parseJsonBody`) and validates it; a failure names the field. */
export function parseJson<S extends z.ZodType>(schema: S, bytes: Uint8Array): z.infer<S> {
  let value: unknown;
  try {
    value = parseJsonBody(bytes);
  } catch (error) {
    if (error instanceof PayloadError) {
      throw new RequestError(400, error.message, "invalid_request_error");
    }
    throw error;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? issue.path.join(".") : "body";
    throw new RequestError(400, `${field}: ${issue.message}`, "invalid_request_error");
  }
  return parsed.data;
}

/** The `:key` route parameter as a session key (URL-decoded by hono), or a 400. */
export function sessionKeyParam(c: Context): string {
  const key = c.req.param("key");
  if (!key || key.length > 512) {
    throw new RequestError(400, "session key: invalid", "invalid_request_error");
  }
  return key;
}

/** Requires `Authorization: Bearer <GATEWAY_API_KEY>`, compared in constant time. */
export const requireApiKey: MiddlewareHandler<App> = async (c, next) => {
  const key = c.var.config.gatewayApiKey;
  if (!key) {
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
  if (!match || !(await constantTimeEquals(match[1].trim(), key))) {
    return jsonError(c, 401, "missing or invalid API key", "invalid_api_key");
  }
  await next();
};

/** The HTTP status for a turn that did not complete. */
export function failureStatus(error: { type: string }): ContentfulStatusCode {
  if (error.type === "cancelled" || error.type === "interrupted") return 409;
  if (error.type === "turn_timeout") return 504;
  return 502;
}

// Shared HTTP pieces of the route handlers: JSON errors, body reading, API-key auth, session stubs; Workers.
import type { Context, MiddlewareHandler } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { InboundMessage, SubmitReceipt, TurnOutcome } from "../lib/session_sentinel.ts";
import type { Env } from "./env.ts";

/** The hono environment of every route. */
export type App = { Bindings: Env };

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

/** Parses `bytes` as JSON and validates it; a failure names the field. */
export function parseJson<S extends z.ZodType>(schema: S, bytes: Uint8Array): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new RequestError(400, "request body is not valid JSON", "invalid_request_error");
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? issue.path.join(".") : "body";
    throw new RequestError(400, `${field}: ${issue.message}`, "invalid_request_error");
  }
  return parsed.data;
}

/** Requires `Authorization: Bearer <GATEWAY_API_KEY>`, compared in constant time. */
export const requireApiKey: MiddlewareHandler<App> = async (c, next) => {
  const key = c.env.GATEWAY_API_KEY ?? "";
  if (!key) {
    return jsonError(
      c,
      403,
      "the API is disabled: set GATEWAY_API_KEY (wrangler secret put GATEWAY_API_KEY)",
      "not_configured",
    );
  }
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match || !(await timingSafeEqual(match[1].trim(), key))) {
    return jsonError(c, 401, "missing or invalid API key", "invalid_api_key");
  }
  await next();
};

/** The Durable Object stub of a session key. */
export function sessionStub(env: Env, sessionKey: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}

/**
 * Stores a message in its session; a storage failure becomes a 503 so the sender retries.
 * With `refuseWhenFull`, a full queue becomes a 429 (API and generic webhook callers).
 */
export async function submitMessage(
  env: Env,
  sessionKey: string,
  message: InboundMessage,
  refuseWhenFull: boolean,
): Promise<SubmitReceipt> {
  let receipt: SubmitReceipt;
  try {
    receipt = await sessionStub(env, sessionKey).submit(message);
  } catch (error) {
    console.error("submit failed", sessionKey, error instanceof Error ? error.message : "unknown");
    throw new RequestError(503, "the message could not be stored; retry", "unavailable");
  }
  if (receipt.refused && refuseWhenFull) {
    throw new RequestError(
      429,
      "too many messages are waiting in this session; retry later",
      "queue_full",
    );
  }
  return receipt;
}

/** The HTTP status for a turn that did not complete. */
export function failureStatus(error: { type: string }): ContentfulStatusCode {
  if (error.type === "cancelled" || error.type === "interrupted") return 409;
  if (error.type === "turn_timeout") return 504;
  return 502;
}

/** Waits for a message's turn to end; survives a restart of the session object by asking again. */
export async function awaitOutcome(
  env: Env,
  message: InboundMessage,
  seq: number,
): Promise<TurnOutcome> {
  const key = message.context.session_key ?? "";
  for (let attempt = 0;; attempt++) {
    try {
      return await sessionStub(env, key).awaitOutcome(seq, message.context);
    } catch (error) {
      if (attempt >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
    }
  }
}

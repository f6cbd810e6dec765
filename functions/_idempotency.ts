// The identity of an API request that starts a turn: its hash (for retries) and its Idempotency-Key; Workers.
import type { Context } from "hono";
import { hashHex } from "../lib/openai/mod.ts";
import { type App, RequestError } from "./_http.ts";
import { hashScope } from "./_conversations.ts";
import type { Env } from "./env.ts";
import type { IdempotencyKeyDO } from "./idempotency_key_do.ts";
import { errorText, log } from "../lib/runtime/mod.ts";

/** What the session needs to know a request again. */
export interface RequestIdentity {
  /** Same key scope, session header and body: a client's retry of this request. */
  requestHash: string;
  /** From `Idempotency-Key`: the delivery key that makes the session answer a replay. */
  deliveryKey?: string;
}

/**
 * A new session's id: random, or with an Idempotency-Key named by it, so that a replay of the
 * request reaches the session that holds its first answer.
 */
export function newSessionId(identity: RequestIdentity, prefix: string): string {
  const key = identity.deliveryKey?.slice("idem:".length);
  return key
    ? `${prefix}k${key.slice(0, 32)}`
    : `${prefix}${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * Identifies a request that starts a turn. With `Idempotency-Key`, the key is claimed for this
 * request (an object per key, so a reuse with another body is seen wherever it would run): a key
 * another request holds is 422 `idempotency_key_reused`. Keys are per tenant (`hashScope`): the
 * same key in two tenants names two records, and neither tenant can replay the other's answer.
 */
export async function requestIdentity(
  c: Context<App>,
  route: string,
  body: Uint8Array,
): Promise<RequestIdentity> {
  const key = c.req.header("idempotency-key");
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new RequestError(
      400,
      "Idempotency-Key: 1-255 printable ASCII characters",
      "invalid_request_error",
    );
  }
  const session = c.req.header("x-session-id") ?? null;
  const scope = hashScope(c);
  const requestHash = await hashHex([scope, route, session, new TextDecoder().decode(body)]);
  if (key === undefined) return { requestHash };
  const keyHash = await hashHex([scope, key]);
  let claimed: boolean;
  try {
    claimed = await _keyStub(c.env, keyHash).claim(requestHash);
  } catch (error) {
    log.error("idempotency key check failed", { error: errorText(error) });
    throw new RequestError(503, "the request could not be checked; retry", "unavailable");
  }
  if (!claimed) {
    throw new RequestError(
      422,
      "Idempotency-Key was used before with a different request",
      "idempotency_key_reused",
    );
  }
  return { requestHash, deliveryKey: `idem:${keyHash}` };
}

/** The record object of an Idempotency-Key (by its scoped hash), typed with its RPC methods. */
function _keyStub(env: Env, keyHash: string): DurableObjectStub<IdempotencyKeyDO> {
  const namespace = env.IDEMPOTENCY_KEYS as DurableObjectNamespace<IdempotencyKeyDO>;
  return namespace.get(namespace.idFromName(keyHash));
}

// The Idempotency-Key Durable Object: one per tenant's key, held by the first request that used it for a day; Workers (cloudflare:workers).
import { DurableObject } from "cloudflare:workers";
import { claimRequestKey } from "../lib/api/mod.ts";
import type { Env } from "./env.ts";

/**
 * One per Idempotency-Key of a tenant (idFromName: the hash of scope and key), so that a reuse
 * with another body is seen wherever its request would run. Its own class, so a session object is
 * only ever a session (before, key records were session objects named `idem:…`).
 */
export class IdempotencyKeyDO extends DurableObject<Env> {
  /** Whether `requestHash` may use this key (see `claimRequestKey`). */
  claim(requestHash: string): boolean {
    return claimRequestKey(this.ctx.storage.kv, requestHash, Date.now());
  }
}

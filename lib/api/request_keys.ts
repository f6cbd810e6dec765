// Idempotency-Key records: a key claimed by one request for a day, refused to any other; runtime-neutral.

/** The synchronous key-value storage a key record lives in (a Durable Object's `storage.kv`). */
export interface KeyStorage {
  get<T>(key: string): T | undefined;
  put<T>(key: string, value: T): void;
}

/** How long an Idempotency-Key belongs to the request that used it first. */
export const IDEMPOTENCY_MS = 24 * 60 * 60 * 1000;

interface _Claim {
  request: string;
  at: number;
}

/**
 * Claims the key this storage stands for (one object per key) for `requestHash`: true when it is
 * new, expired, or already this request's; false when another request holds it (a 422).
 */
export function claimRequestKey(storage: KeyStorage, requestHash: string, now: number): boolean {
  const held = storage.get<_Claim>("claim");
  if (held && now - held.at < IDEMPOTENCY_MS) return held.request === requestHash;
  storage.put<_Claim>("claim", { request: requestHash, at: now });
  return true;
}

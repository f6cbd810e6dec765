// An API tenant's caps kept in its own access object: the sessions it holds (MAX_SESSIONS_PER_TENANT) and its open event streams (MAX_STREAMS_PER_TENANT, leases that expire); runtime-neutral.
import type { RecordStorage } from "./record_storage.ts";

/** How long a stream's slot is held without a renewal: an isolate that dies frees it by then. */
export const STREAM_LEASE_MS = 120_000;

/** A session's place in the count: `session:<key>` marks it, `sessions` is how many are marked. */
const _SESSION = "session:";
const _SESSIONS = "sessions";
const _STREAMS = "streams";

/** What the tenant's object answered a session that asked to be counted. */
export type SessionAdmission = { admitted: true } | { admitted: false; count: number };

/**
 * Counts session `key` among its tenant's, unless that would pass `limit`: a session counted
 * before is admitted again (idempotent), and so is one that `existing` says holds messages from
 * before it was counted (existing sessions keep working; it is counted, even over the limit).
 */
export function admitSession(
  storage: RecordStorage,
  key: string,
  limit: number,
  existing: boolean,
): SessionAdmission {
  if (storage.get<number>(`${_SESSION}${key}`) !== undefined) return { admitted: true };
  const count = storage.get<number>(_SESSIONS) ?? 0;
  if (!existing && count >= limit) return { admitted: false, count };
  storage.put(`${_SESSION}${key}`, 1);
  storage.put(_SESSIONS, count + 1);
  return { admitted: true };
}

/**
 * Uncounts session `key` (its erasure): the tenant may make another. True when it was counted;
 * calling it twice changes nothing.
 */
export function forgetSession(storage: RecordStorage, key: string): boolean {
  if (storage.get<number>(`${_SESSION}${key}`) === undefined) return false;
  storage.delete(`${_SESSION}${key}`);
  storage.put(_SESSIONS, Math.max(0, (storage.get<number>(_SESSIONS) ?? 1) - 1));
  return true;
}

/** How many of the tenant's sessions are counted. */
export function sessionCount(storage: RecordStorage): number {
  return storage.get<number>(_SESSIONS) ?? 0;
}

interface _Lease {
  id: string;
  until: number;
}

/**
 * Takes one of the tenant's `limit` stream slots for lease `id` until `now + STREAM_LEASE_MS`
 * (renewed by taking it again): null when taken, else the milliseconds until the first slot's
 * lease would lapse (a retry hint). Lapsed leases — a stream whose isolate died — are dropped.
 */
export function acquireStream(
  storage: RecordStorage,
  id: string,
  limit: number,
  now: number,
): number | null {
  const leases = (storage.get<_Lease[]>(_STREAMS) ?? []).filter((l) => l.until > now);
  const held = leases.find((l) => l.id === id);
  if (held) held.until = now + STREAM_LEASE_MS;
  else if (leases.length >= limit) {
    storage.put(_STREAMS, leases);
    return Math.max(1, Math.min(...leases.map((l) => l.until)) - now);
  } else leases.push({ id, until: now + STREAM_LEASE_MS });
  storage.put(_STREAMS, leases);
  return null;
}

/** Frees lease `id`'s slot (its stream ended or its client left); freeing it twice is harmless. */
export function releaseStream(storage: RecordStorage, id: string): void {
  const leases = storage.get<_Lease[]>(_STREAMS) ?? [];
  const kept = leases.filter((l) => l.id !== id);
  if (kept.length !== leases.length) storage.put(_STREAMS, kept);
}

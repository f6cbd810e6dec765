// An API tenant's jobs across its sessions (MAX_JOBS_PER_TENANT), kept in its own access object: each session's live job count as it last reported it, and their sum; runtime-neutral.
import type { RecordStorage } from "./record_storage.ts";

/** A session's count: `jobs:<key>`; `jobs` is the sum over the tenant's sessions. */
const _SESSION = "jobs:";
const _TOTAL = "jobs";

/** What the tenant's object answered a session about to create a job. */
export type JobAdmission = { admitted: true } | { admitted: false; count: number };

/**
 * Admits one more job in session `key`, which holds `live` jobs not done now, when the other
 * sessions' counts plus `live + 1` stay within `limit`; the session is then counted at
 * `live + 1` (the job about to be stored: a reservation its next report corrects if the store
 * failed). Refused: nothing changes, and `count` is the tenant's jobs with this session's `live`.
 * Each call sets the session's count from what it holds, so a count once wrong is made right by
 * its session's next create or report, never carried on.
 */
export function admitJob(
  storage: RecordStorage,
  key: string,
  live: number,
  limit: number,
): JobAdmission {
  const others = tenantJobCount(storage) - _countOf(storage, key);
  if (others + live + 1 > limit) return { admitted: false, count: others + live };
  _set(storage, key, live + 1, others);
  return { admitted: true };
}

/** Session `key` holds `live` jobs not done (one was created, ended or removed). */
export function reportJobs(storage: RecordStorage, key: string, live: number): void {
  const others = tenantJobCount(storage) - _countOf(storage, key);
  _set(storage, key, live, others);
}

/** Uncounts session `key`'s jobs (its erasure); true when it had any counted. */
export function forgetJobs(storage: RecordStorage, key: string): boolean {
  const had = _countOf(storage, key) > 0;
  reportJobs(storage, key, 0);
  return had;
}

/** The tenant's jobs not done, over all its sessions, as they last reported them. */
export function tenantJobCount(storage: RecordStorage): number {
  return storage.get<number>(_TOTAL) ?? 0;
}

function _countOf(storage: RecordStorage, key: string): number {
  return storage.get<number>(`${_SESSION}${key}`) ?? 0;
}

// A session with no jobs keeps no key: an erased or idle session leaves nothing behind.
function _set(storage: RecordStorage, key: string, count: number, others: number): void {
  if (count > 0) storage.put(`${_SESSION}${key}`, count);
  else storage.delete(`${_SESSION}${key}`);
  storage.put(_TOTAL, Math.max(0, others) + count);
}

// Ids that name a session's message without a lookup (`<prefix>_<base64url session id>_<seq>`): runs and responses; runtime-neutral.
import { SESSION_ID } from "./openai_api.ts";

/** The header that carries a turn's run id on chat completions and responses, for `/v1/runs/{id}`. */
export const RUN_ID_HEADER = "X-Baton-Run-Id";

/** `<prefix>_<base64url session id>_<seq>`: the id routes to its session without a lookup. */
export function sessionSeqId(prefix: string, session: string, seq: number): string {
  const encoded = btoa(session).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `${prefix}_${encoded}_${seq}`;
}

/**
 * The session id and seq an id of `prefix` names, or null when `id` is not one. `valid` checks
 * the session (default: an API session id).
 */
export function parseSessionSeqId(
  prefix: string,
  id: string,
  valid: (session: string) => boolean = (session) => SESSION_ID.test(session),
): { session: string; seq: number } | null {
  if (!id.startsWith(`${prefix}_`)) return null;
  const match = /^([A-Za-z0-9_-]{1,172})_([1-9][0-9]{0,15})$/.exec(id.slice(prefix.length + 1));
  if (!match) return null;
  let session: string;
  try {
    session = atob(match[1].replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  return valid(session) ? { session, seq: Number(match[2]) } : null;
}

/** `run_<base64url session id>_<seq>`: a run of the runs API. */
export function runId(session: string, seq: number): string {
  return sessionSeqId("run", session, seq);
}

/** The session id and seq a run id names, or null when `id` is not one. */
export function parseRunId(id: string): { session: string; seq: number } | null {
  return parseSessionSeqId("run", id);
}

/** `job_<base64url session key>_<n>`: job `n` of a session, any session key (platform ones too). */
export function jobId(sessionKey: string, n: number): string {
  return sessionSeqId("job", sessionKey, n);
}

/** The session key and job number a job id names, or null when `id` is not one. */
export function parseJobId(id: string): { sessionKey: string; n: number } | null {
  const parsed = parseSessionSeqId("job", id, (key) => /^[\x21-\x7e]{1,128}$/.test(key));
  return parsed ? { sessionKey: parsed.session, n: parsed.seq } : null;
}

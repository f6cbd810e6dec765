// Ids that name a session's message without a lookup (`<prefix>_<base64url session id>_<seq>`): runs and responses; runtime-neutral.
import { SESSION_ID } from "./openai_api.ts";

/** The header that carries a turn's run id on chat completions and responses, for `/v1/runs/{id}`. */
export const RUN_ID_HEADER = "X-Baton-Run-Id";

/** `<prefix>_<base64url session id>_<seq>`: the id routes to its session without a lookup. */
export function sessionSeqId(prefix: string, session: string, seq: number): string {
  const encoded = btoa(session).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `${prefix}_${encoded}_${seq}`;
}

/** The session id and seq an id of `prefix` names, or null when `id` is not one. */
export function parseSessionSeqId(
  prefix: string,
  id: string,
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
  return SESSION_ID.test(session) ? { session, seq: Number(match[2]) } : null;
}

/** `run_<base64url session id>_<seq>`: a run of the runs API. */
export function runId(session: string, seq: number): string {
  return sessionSeqId("run", session, seq);
}

/** The session id and seq a run id names, or null when `id` is not one. */
export function parseRunId(id: string): { session: string; seq: number } | null {
  return parseSessionSeqId("run", id);
}

// Run ids of the runs API (`run_<base64url session id>_<seq>`), shared by every route that names a run; runtime-neutral.
import { SESSION_ID } from "./openai_api.ts";

/** The header that carries a turn's run id on chat completions and responses, for `/v1/runs/{id}`. */
export const RUN_ID_HEADER = "X-Baton-Run-Id";

/** `run_<base64url session id>_<seq>`: the id routes to its session without a lookup. */
export function runId(session: string, seq: number): string {
  const encoded = btoa(session).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `run_${encoded}_${seq}`;
}

/** The session id and seq a run id names, or null when `id` is not one. */
export function parseRunId(id: string): { session: string; seq: number } | null {
  const match = /^run_([A-Za-z0-9_-]{1,172})_([1-9][0-9]{0,15})$/.exec(id);
  if (!match) return null;
  let session: string;
  try {
    session = atob(match[1].replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  return SESSION_ID.test(session) ? { session, seq: Number(match[2]) } : null;
}

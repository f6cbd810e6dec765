// Ids that name a session's message without a lookup (`<prefix>_<base64url session id>_<seq>`): runs and responses; runtime-neutral.
import { SESSION_ID } from "./openai_api.ts";

// A tenant's name, as `GATEWAY_API_KEYS` allows it (see api_tenants.ts): never holds a `/`.
const _TENANT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

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
  // 216: a tenant's id's `<tenant>/<session id>` (32 + 1 + 128 bytes) in base64url.
  const match = /^([A-Za-z0-9_-]{1,216})_([1-9][0-9]{0,15})$/.exec(id.slice(prefix.length + 1));
  if (!match) return null;
  let session: string;
  try {
    session = atob(match[1].replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  return valid(session) ? { session, seq: Number(match[2]) } : null;
}

/**
 * `<prefix>_<base64url "<tenant>/<session id>">_<seq>`: a tenant's API session's message (a run,
 * a response). The tenant is in the id because session ids are the clients' own: two tenants'
 * session `s1` would otherwise give their messages one id. (A `/` is in neither a tenant's name
 * nor a session id.)
 */
export function tenantSeqId(prefix: string, tenant: string, session: string, seq: number): string {
  return sessionSeqId(prefix, `${tenant}/${session}`, seq);
}

/**
 * The tenant, session id and seq an id of `prefix` names (see `tenantSeqId`), or null when `id`
 * is not one. `tenant` is null for an id from before tenants were named in it
 * (`<prefix>_<base64url session id>_<seq>`): the caller's.
 */
export function parseTenantSeqId(
  prefix: string,
  id: string,
): { tenant: string | null; session: string; seq: number } | null {
  const parsed = parseSessionSeqId(prefix, id, (named) => {
    const slash = named.indexOf("/");
    return slash < 0
      ? SESSION_ID.test(named)
      : _TENANT.test(named.slice(0, slash)) && SESSION_ID.test(named.slice(slash + 1));
  });
  if (!parsed) return null;
  const slash = parsed.session.indexOf("/");
  if (slash < 0) return { tenant: null, ...parsed };
  return {
    tenant: parsed.session.slice(0, slash),
    session: parsed.session.slice(slash + 1),
    seq: parsed.seq,
  };
}

/** `run_<base64url "<tenant>/<session id>">_<seq>`: a run of the runs API (see `tenantSeqId`). */
export function runId(tenant: string, session: string, seq: number): string {
  return tenantSeqId("run", tenant, session, seq);
}

/** The tenant (null: the caller's), session id and seq a run id names, or null when `id` is not one. */
export function parseRunId(
  id: string,
): { tenant: string | null; session: string; seq: number } | null {
  return parseTenantSeqId("run", id);
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

// An API tenant's caps as the Worker and the session objects ask them: MAX_SESSIONS_PER_TENANT (a session's first message) and MAX_STREAMS_PER_TENANT (a streamed request's slot); Workers.
import type { Context } from "hono";
import { tenantOfSessionKey } from "../lib/api/mod.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { accessStub } from "./access_client.ts";
import { type App, RequestError } from "./_http.ts";
import type { Env } from "./env.ts";

/** The session object's mark that its tenant counted it: its later messages ask nothing. */
const _COUNTED = "tenant_counted";

/** How often an open stream renews its slot's lease (`STREAM_LEASE_MS` is twice this). */
const _RENEW_MS = 60_000;

/**
 * Asked by a session object before it stores a message or a job: null to go on, or the refusal's
 * text when the session is an API tenant's, new, and the tenant holds `limit` sessions already.
 * Only a session not counted yet asks its tenant's object (once; then it keeps a mark), so no
 * later message of a session costs a call. A session holding messages from before it was counted
 * (made before the cap, or while it was off) is counted and goes on.
 */
export async function admitTenantSession(
  env: Env,
  storage: DurableObjectStorage,
  key: string,
  limit: number | null,
): Promise<string | null> {
  const tenant = tenantOfSessionKey(key);
  if (limit === null || tenant === null || storage.kv.get(_COUNTED) !== undefined) return null;
  const answer = await accessStub(env, `tenant:${tenant}`).admitSession(
    key,
    limit,
    _holdsAnything(storage.sql),
  );
  if (!answer.admitted) {
    return `this API key's tenant holds MAX_SESSIONS_PER_TENANT (${limit}) sessions; delete one ` +
      "(DELETE /v1/sessions/{key}) or continue one (X-Session-Id) to go on";
  }
  storage.kv.put(_COUNTED, 1);
  return null;
}

/**
 * Uncounts session `key` from its API tenant's sessions, for the erasure of that session (after
 * its object's storage is gone, mark included): the tenant may start another in its place. No-op
 * for a platform session; calling it twice uncounts once.
 */
export async function forgetTenantSession(env: Env, key: string): Promise<void> {
  const tenant = tenantOfSessionKey(key);
  if (tenant !== null) await accessStub(env, `tenant:${tenant}`).forgetSession(key);
}

/** A tenant's open stream's slot: `release()` frees it (once; later calls do nothing). */
export interface StreamSlot {
  release(): void;
}

const _NO_SLOT: StreamSlot = { release() {} };

/**
 * Takes one of the request's tenant's `MAX_STREAMS_PER_TENANT` stream slots before a streamed
 * request starts its turn; when all are open, a 429 `stream_limit` with `Retry-After`. The slot is
 * a lease renewed while the stream is open: one whose isolate died lapses within two minutes.
 * Unset: no I/O.
 */
export async function openStreamSlot(c: Context<App>): Promise<StreamSlot> {
  const limit = c.var.config.maxStreamsPerTenant;
  if (limit === null) return _NO_SLOT;
  const tenant = accessStub(c.env, `tenant:${c.var.tenant.name}`);
  const id = crypto.randomUUID();
  const retryAfterMs = await tenant.acquireStream(id, limit);
  if (retryAfterMs !== null) {
    c.header("Retry-After", String(Math.ceil(retryAfterMs / 1000)));
    throw new RequestError(
      429,
      `this API key's tenant has MAX_STREAMS_PER_TENANT (${limit}) streams open; retry once ` +
        "one ends",
      "stream_limit",
    );
  }
  // The release must outlive the request (a client that left ends it): the request waits for it.
  let released!: (release: Promise<unknown>) => void;
  const waited = new Promise<unknown>((resolve) => released = resolve);
  try {
    c.executionCtx.waitUntil(waited);
  } catch {
    // No execution context (a direct call in a test): the release runs on its own.
  }
  let open = true;
  const renew = setInterval(() => {
    void tenant.acquireStream(id, limit).catch((e) => _slotFailed("renewed", e));
  }, _RENEW_MS);
  return {
    release() {
      if (!open) return;
      open = false;
      clearInterval(renew);
      released(tenant.releaseStream(id).catch((e) => _slotFailed("released", e)));
    },
  };
}

// A lost renewal or release only lets the lease lapse: the slot is free in two minutes anyway.
function _slotFailed(what: string, error: unknown): void {
  log.warn(`a stream slot was not ${what}`, { error: errorText(error) });
}

// Whether the session object holds messages or jobs (it existed before it was counted).
function _holdsAnything(sql: SqlStorage): boolean {
  for (const table of ["inbox", "job"]) {
    const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table)
      .toArray().length > 0;
    if (exists && sql.exec(`SELECT 1 FROM ${table} LIMIT 1`).toArray().length > 0) return true;
  }
  return false;
}

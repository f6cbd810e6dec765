// The jobs API: scheduled turns of a session (create, list, read with last runs, delete, run now, pause, resume), tenant-scoped; Workers.
import { type Context, Hono } from "hono";
import * as z from "zod";
import {
  mayAddressSession,
  tenantOfSessionKey,
  tenantPrefix,
  tenantSessionKey,
} from "../lib/api/mod.ts";
import { jobId, parseJobId, runId, sessionIdField } from "../lib/openai/mod.ts";
import { PLATFORMS } from "../lib/platforms/mod.ts";
import { scheduleInput } from "../lib/session/schedule.ts";
import type { JobAnswer, JobRequest, JobView } from "../lib/session/mod.ts";
import { type App, parseJson, RequestError, requireApiKey } from "./_http.ts";
import { turnQuotaRefusal } from "./_api_quota.ts";
import { sessionStub } from "./session_client.ts";

/** A `POST /v1/jobs` body, built on its first parse (`z.lazy`): a start-up builds no route's schema. */
const _createRequest = z.lazy(() =>
  z.strictObject({
    session: z.string().min(1).max(200),
    prompt: z.string().min(1).max(4_000),
    schedule: scheduleInput,
  })
);

/**
 * Session key prefixes that name a chat session (admin keys may schedule in them). Email is no
 * webhook adapter (mail comes through the `email()` handler) but its sessions are chats all the
 * same: a job there mails its answer in the thread.
 */
const _CHAT_PREFIXES = [...PLATFORMS.map((p) => `${p.name}:`), "webhook:", "email:"];

/**
 * Routes under /v1/jobs, each behind the API key. A job id names its session key; a session the
 * caller's tenant may not address is not found (404), as for runs.
 */
export const jobRoutes = new Hono<App>();

jobRoutes.post("/", requireApiKey, async (c) => {
  const body = parseJson(_createRequest, new Uint8Array(await c.req.arrayBuffer()));
  const session = _session(c, body.session);
  const origin = session.key.startsWith("api") ? "api" : "chat";
  const answer = await _ask(c, session.key, {
    op: "create",
    spec: { prompt: body.prompt, schedule: body.schedule },
    origin,
  });
  return c.json(_job(session, _expect(answer, "job")), 201);
});

jobRoutes.get("/", requireApiKey, async (c) => {
  const given = c.req.query("session");
  if (!given) {
    throw new RequestError(400, "the session query parameter is required", "invalid_request");
  }
  const session = _session(c, given);
  const answer = await _ask(c, session.key, { op: "list" });
  return c.json({ data: _expect(answer, "jobs").map((job) => _job(session, job)) });
});

jobRoutes.get("/:id", requireApiKey, async (c) => {
  const { session, n } = _jobParam(c);
  return c.json(_job(session, _expect(await _ask(c, session.key, { op: "get", id: n }), "job")));
});

jobRoutes.delete("/:id", requireApiKey, async (c) => {
  const { session, n } = _jobParam(c);
  _expect(await _ask(c, session.key, { op: "delete", id: n }), "deleted");
  return c.json({ id: c.req.param("id"), deleted: true });
});

for (const op of ["run", "pause", "resume"] as const) {
  jobRoutes.post(`/:id/${op}`, requireApiKey, async (c) => {
    const { session, n } = _jobParam(c);
    // A run now is a turn: counted against the caller's tenant like a chat call, once the job
    // id is one it may address. Every call runs again (no Idempotency-Key here), so each counts.
    // Resuming a one-off job past its time runs it at once (late): a turn, counted the same way;
    // when refused it stays paused. Resuming anything else starts no turn.
    if (op === "run" || (op === "resume" && await _resumeRuns(c, session.key, n))) {
      const refusal = await turnQuotaRefusal(c, crypto.randomUUID());
      if (refusal) return refusal;
    }
    const job = _job(session, _expect(await _ask(c, session.key, { op, id: n }), "job"));
    return c.json(job, op === "run" ? 202 : 200);
  });
}

/** Whether resuming job `n` would run it now: a paused one-off job whose time has passed. */
async function _resumeRuns(c: Context<App>, key: string, n: number): Promise<boolean> {
  const answer = await _ask(c, key, { op: "get", id: n });
  if (!("job" in answer)) return false; // the resume itself answers the error
  const { status, schedule } = answer.job;
  return status === "paused" && "at" in schedule && Date.parse(schedule.at) <= Date.now();
}

/** A session as the caller names it: `key`, and `id` when it is one of the caller's API sessions. */
interface _Session {
  key: string;
  id: string | null;
}

/**
 * The session `given` names: one of the tenant's API session ids (as in `X-Session-Id`), or for
 * admin keys a full session key such as `telegram:123456`.
 */
function _session(c: Context<App>, given: string): _Session {
  const tenant = c.var.tenant;
  const chat = _CHAT_PREFIXES.some((p) => given.startsWith(p)) || /^api(\.[^:]+)?:/.test(given);
  // A chat session's key is never taken as an API session id: only admin keys reach those.
  if (chat) return _addressable(c, given, "no such session");
  if (!sessionIdField.safeParse(given).success) {
    throw new RequestError(
      400,
      "session must be an API session id (or, for admin keys, a session key)",
      "invalid_request",
    );
  }
  return { key: tenantSessionKey(tenant.name, given), id: given };
}

function _addressable(c: Context<App>, key: string, missing = "no such job"): _Session {
  if (!mayAddressSession(c.var.tenant, key)) throw new RequestError(404, missing, "not_found");
  const prefix = tenantPrefix(c.var.tenant.name);
  return { key, id: key.startsWith(prefix) ? key.slice(prefix.length) : null };
}

function _jobParam(c: Context<App>): { session: _Session; n: number } {
  const parsed = parseJobId(c.req.param("id") ?? "");
  if (!parsed) throw new RequestError(404, "no such job", "not_found");
  return { session: _addressable(c, parsed.sessionKey), n: parsed.n };
}

function _ask(c: Context<App>, key: string, request: JobRequest): Promise<JobAnswer> {
  return sessionStub(c.env, key).jobs(request, { session_key: key });
}

/** The answer's `field`, or its error as a 4xx. */
function _expect<K extends "job" | "jobs" | "deleted">(
  answer: JobAnswer,
  field: K,
): Extract<JobAnswer, Record<K, unknown>>[K] {
  if ("error" in answer) {
    const type = answer.status === 404
      ? "not_found"
      : answer.status === 409
      ? "conflict"
      : answer.status === 403
      ? "session_limit"
      : answer.status === 429
      ? "job_limit"
      : "invalid_job";
    throw new RequestError(answer.status, answer.error, type);
  }
  if (!(field in answer)) throw new Error(`jobs answer without ${field}`);
  return (answer as unknown as Record<K, never>)[field];
}

/** A job as the API shows it: its id and session, its runs with their run ids (API sessions). */
function _job(session: _Session, job: JobView) {
  const { id, last_runs, ...rest } = job;
  const tenant = tenantOfSessionKey(session.key);
  return {
    id: jobId(session.key, id),
    session: session.id ?? session.key,
    ...rest,
    last_runs: last_runs.map((run) => ({
      at: run.at,
      run_id: session.id === null || tenant === null ? null : runId(tenant, session.id, run.seq),
      status: run.status,
    })),
  };
}

/** The request body `POST /v1/jobs` validates, described by GET /openapi.json (functions/openapi.ts). */
export const jobRequestSchema = _createRequest;

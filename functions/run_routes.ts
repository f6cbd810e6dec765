// The runs API: start a turn, read its state, follow its events live, stop it; Workers.
import { Hono } from "hono";
import * as z from "zod";
import { tenantSessionKey } from "../lib/api/mod.ts";
import { parseRunId, runId, sessionIdField } from "../lib/openai/mod.ts";
import type { ContextFields } from "../lib/runtime/mod.ts";
import { APPROVAL_CHOICES, type ApprovalChoice, type InboundMessage } from "../lib/session/mod.ts";
import { type App, jsonError, parseJson, RequestError, requireApiKey } from "./_http.ts";
import { DROPPED_MESSAGE, messageDropped } from "./_message_hook.ts";
import { apiTurnQuota, requestSpend } from "./_api_quota.ts";
import { refusalError, sessionStub, submitMessage } from "./session_client.ts";
import { newSessionId, requestIdentity } from "./_idempotency.ts";
import { relayRunEvents } from "./_run_events.ts";
import { openStreamSlot } from "./_tenant_caps.ts";

type _Context = ContextFields & { session_key: string };

// Request bodies are built on their first parse (`z.lazy`): a start-up builds no route's schema.
const _runRequest = z.lazy(() =>
  z.object({
    input: z.string().min(1).max(100_000),
    session: sessionIdField.optional(),
  })
);

/**
 * Routes under /v1/runs, each behind the API key. A run id names a session id, never a tenant: the
 * session key comes from the caller's tenant, so another tenant's run is simply not found (404).
 */
export const runRoutes = new Hono<App>();

runRoutes.post("/", requireApiKey, apiTurnQuota, async (c) => {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  const body = parseJson(_runRequest, bytes);

  const identity = await requestIdentity(c, "runs", bytes);
  const session = body.session ?? newSessionId(identity, "r");
  const context = _context(c.var.tenant.name, session);
  // Its tokens settle with the tenant's record (its reservation, or the day's sums).
  const message: InboundMessage = {
    text: body.input,
    context,
    events: true,
    ...identity,
    ...requestSpend(c),
  };
  if (await messageDropped(c, message, "api")) {
    return jsonError(c, 422, DROPPED_MESSAGE, "message_dropped");
  }
  const receipt = await submitMessage(c.env, context.session_key, message, true);
  // The session key names the session on /v1/sessions/{key} (the console reads its transcript there).
  return c.json({
    run_id: runId(c.var.tenant.name, session, receipt.seq),
    session,
    session_key: context.session_key,
    status: "queued",
  }, 202);
});

runRoutes.get("/:id", requireApiKey, async (c) => {
  const run = _parseRunId(c.var.tenant.name, c.req.param("id"));
  const state = await sessionStub(c.env, run.context.session_key).runState(run.seq, run.context);
  if (!state) throw new RequestError(404, "no such run", "not_found");
  return c.json({ run_id: c.req.param("id"), session: run.session, ...state });
});

runRoutes.get("/:id/events", requireApiKey, async (c) => {
  const run = _parseRunId(c.var.tenant.name, c.req.param("id"));
  const runId = c.req.param("id");
  const slot = await openStreamSlot(c);
  const relay = await relayRunEvents(
    c.env,
    run.context,
    run.seq,
    (event) => [
      { event: event.type, data: { type: event.type, run_id: runId, ...event.data } },
    ],
    {},
    undefined,
    slot,
  );
  if (!relay) throw new RequestError(404, "no such run", "not_found");
  return relay;
});

runRoutes.post("/:id/stop", requireApiKey, async (c) => {
  const run = _parseRunId(c.var.tenant.name, c.req.param("id"));
  const stub = sessionStub(c.env, run.context.session_key);
  if (await stub.cancelRun(run.seq, run.context)) return c.json({ status: "stopping" });
  const state = await stub.runState(run.seq, run.context);
  if (!state) throw new RequestError(404, "no such run", "not_found");
  throw new RequestError(409, `the run has already ended (${state.status})`, "run_finished");
});

const _steerRequest = z.lazy(() => z.object({ input: z.string().min(1).max(100_000) }));

/**
 * Steers a run: `input` is given to its turn, whose model reads it at its next step (before its
 * next model call) as a user message marked as sent meanwhile; when the turn ends first, it runs
 * as its own turn in the run's session. 202 with the steer's own run id (`steer_id`: its state is
 * the run's once taken); 409 when the run has ended.
 */
runRoutes.post("/:id/steer", requireApiKey, apiTurnQuota, async (c) => {
  const id = c.req.param("id");
  const run = _parseRunId(c.var.tenant.name, id);
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  const body = parseJson(_steerRequest, bytes);
  const identity = await requestIdentity(c, `runs/${id}/steer`, bytes);
  const message: InboundMessage = {
    text: body.input,
    context: run.context,
    ...identity,
    ...requestSpend(c),
  };
  if (await messageDropped(c, message, "api")) {
    return jsonError(c, 422, DROPPED_MESSAGE, "message_dropped");
  }
  const stub = sessionStub(c.env, run.context.session_key);
  const result = await stub.steerRun(run.seq, message);
  if (result === "not_found") throw new RequestError(404, "no such run", "not_found");
  if (result === "ended") {
    const state = await stub.runState(run.seq, run.context);
    const status = state?.status ?? "ended";
    throw new RequestError(409, `the run ${id} has already ended (${status})`, "run_finished");
  }
  const refused = refusalError(result);
  if (refused) throw refused;
  const steerId = runId(c.var.tenant.name, run.session, result.seq);
  return c.json({ run_id: id, steer_id: steerId, session: run.session, status: "steering" }, 202);
});

const _approvalRequest = z.lazy(() =>
  z.object({ choice: z.enum(APPROVAL_CHOICES as [ApprovalChoice, ...ApprovalChoice[]]) })
);

runRoutes.post("/:id/approval", requireApiKey, async (c) => {
  const run = _parseRunId(c.var.tenant.name, c.req.param("id"));
  const body = parseJson(_approvalRequest, new Uint8Array(await c.req.arrayBuffer()));
  const stub = sessionStub(c.env, run.context.session_key);
  const answer = await stub.answerApproval(run.seq, body.choice, run.context);
  if (answer === "not_found") throw new RequestError(404, "no such run", "not_found");
  if (answer === "not_pending") {
    throw new RequestError(409, "the run is not waiting for an approval", "approval_not_pending");
  }
  return c.json({ run_id: c.req.param("id"), choice: body.choice, status: "answered" });
});

/** The context of API session `session` of `tenant`; its `session_key` names the session object. */
function _context(tenant: string, session: string): _Context {
  return { platform: "api", chat_id: session, session_key: tenantSessionKey(tenant, session) };
}

/**
 * The session and seq of run `id`, in `tenant`'s sessions; a malformed id, or another tenant's,
 * is a 404. An id naming no tenant (from before they were named) is the caller's.
 */
function _parseRunId(
  tenant: string,
  id: string,
): { session: string; seq: number; context: _Context } {
  const run = parseRunId(id);
  if (!run || (run.tenant !== null && run.tenant !== tenant)) {
    throw new RequestError(404, "no such run", "not_found");
  }
  return { session: run.session, seq: run.seq, context: _context(tenant, run.session) };
}

/** The request bodies these routes validate, described by GET /openapi.json (functions/openapi.ts). */
export const runRequestSchemas = {
  run: _runRequest,
  steer: _steerRequest,
  approval: _approvalRequest,
} as const;

// The OpenAI Responses API over the session objects: create (JSON, SSE, background), retrieve, delete, cancel, input items; Workers.
import type { Context } from "hono";
import { Hono } from "hono";
import { batonToolNames } from "../lib/agent.ts";
import { tenantSessionKey } from "../lib/api_tenants.ts";
import type { ChatMessage } from "../lib/chat_model.ts";
import {
  inputItemsList,
  isResponseMeta,
  parseResponseId,
  responseId,
  type ResponseMeta,
  responseObject,
  responseRequest,
  responseStatus,
  type ResponseTurn,
  responseTurn,
} from "../lib/responses_api.ts";
import { responseStreamFrames } from "../lib/responses_stream.ts";
import { RUN_ID_HEADER, runId } from "../lib/run_ids.ts";
import type { ContextFields } from "../lib/session_context.ts";
import type { InboundMessage, MessageRecord } from "../lib/session/mod.ts";
import { type App, failureStatus, parseJson, RequestError, requireApiKey } from "./_http.ts";
import { apiTurnQuota } from "./_api_quota.ts";
import { newSessionId, requestIdentity } from "./_idempotency.ts";
import { relayRunEvents } from "./_run_events.ts";
import { openStreamSlot } from "./_tenant_caps.ts";
import { heldReply, type PlainRun } from "./_held_reply.ts";
import { runOrFork, sessionStub, submitOrFork } from "./session_client.ts";
import { tools } from "./tools.ts";

/**
 * Routes under /v1/responses, each behind the API key. A response id names its tenant and session
 * id: another tenant's response is a 404. An id naming no tenant (from before they were named) is
 * the caller's: its session key comes from the caller's tenant.
 */
export const responseRoutes = new Hono<App>();

/** Where a response runs: its session, and the history it must continue or starts with. */
interface _Placement {
  session: string;
  seed: ChatMessage[];
  /** The session's conversation must be exactly `seed` (else the turn runs in a fork). */
  continues: boolean;
}

responseRoutes.post("/", requireApiKey, apiTurnQuota, async (c) => {
  const body = new Uint8Array(await c.req.arrayBuffer());
  const request = parseJson(responseRequest, body);
  if (request.background && request.store === false) {
    throw new RequestError(400, "background: requires store: true", "invalid_request_error");
  }
  const turn = responseTurn(request, c.var.config.llmModel, Date.now());
  if (typeof turn === "string") throw new RequestError(400, turn, "invalid_request_error");
  _checkTools(turn);
  const identity = await requestIdentity(c, "responses", body);
  const newSession = () => newSessionId(identity, "r");
  let placement = await _place(c, turn, newSession);
  const fork = () => ({ session: newSession(), seed: placement.seed, continues: false });
  const tenant = c.var.tenant.name;
  const message = (p: _Placement) => ({ ..._message(tenant, turn, p), ...identity });
  if (request.stream || request.background) {
    // A stream's slot first (MAX_STREAMS_PER_TENANT): refused, no turn starts.
    const slot = request.stream ? await openStreamSlot(c) : undefined;
    const submitted = await submitOrFork(c.env, placement, fork, message).catch((error) => {
      slot?.release();
      throw error;
    });
    placement = submitted.placement;
    const { receipt } = submitted;
    const id = responseId(tenant, placement.session, receipt.seq);
    const headers = {
      "X-Session-Id": placement.session,
      [RUN_ID_HEADER]: runId(tenant, placement.session, receipt.seq),
    };
    if (!request.stream) {
      return c.json(responseObject({ id, meta: turn.meta, status: "queued" }), 200, headers);
    }
    const frames = responseStreamFrames(id, turn.meta);
    const context = _context(tenant, placement.session);
    const { keepAliveMs } = c.var.config;
    const relay = await relayRunEvents(
      c.env,
      context,
      receipt.seq,
      frames,
      headers,
      keepAliveMs,
      slot,
    );
    if (!relay) {
      throw new RequestError(409, "the message was not stored as a run; retry", "conflict");
    }
    return relay;
  }
  const respond = (run: PlainRun<_Placement>) => {
    const id = responseId(tenant, run.placement.session, run.seq);
    const headers = { "X-Session-Id": run.placement.session };
    if (run.outcome.status === "failed") {
      // The turn ran (or was stopped): a client retry would run it again, so clients must not retry.
      const noRetry = { ...headers, "x-should-retry": "false" };
      return Promise.resolve(
        c.json({ error: run.outcome.error }, failureStatus(run.outcome.error), noRetry),
      );
    }
    const { reply, usage, toolCalls, truncated } = run.outcome;
    const state = { status: "completed" as const, output: reply, toolCalls, truncated, usage };
    return Promise.resolve(c.json(responseObject({ id, meta: turn.meta, ...state }), 200, headers));
  };
  // As a chat completion: a turn that pauses for approval gets the run id at once, the body later.
  return await heldReply(
    (onPaused) => runOrFork(c.env, placement, fork, message, onPaused),
    respond,
    (at) => at.session,
    tenant,
    c.var.config.keepAliveMs,
  );
});

responseRoutes.get("/:id", requireApiKey, async (c) => {
  const { id, record, meta } = await _find(c);
  return c.json(_object(id, record, meta));
});

responseRoutes.delete("/:id", requireApiKey, async (c) => {
  const { id, seq, context } = await _find(c);
  if (!(await sessionStub(c.env, context.session_key).deleteResponse(seq, context))) {
    throw _notFound();
  }
  return c.json({ id, object: "response", deleted: true });
});

responseRoutes.post("/:id/cancel", requireApiKey, async (c) => {
  const { id, seq, context, record, meta } = await _find(c);
  const stub = sessionStub(c.env, context.session_key);
  const stopped = await stub.cancelRun(seq, context);
  const now = stopped ? await stub.response(seq, context) as MessageRecord | null : record;
  if (!now) throw _notFound();
  if (!stopped && now.state.status !== "cancelled") {
    throw new RequestError(
      409,
      `the response has already ended (${responseStatus(now.state)})`,
      "response_finished",
    );
  }
  return c.json(_object(id, now, meta));
});

responseRoutes.get("/:id/input_items", requireApiKey, async (c) => {
  const { id, meta } = await _find(c);
  return c.json(inputItemsList(id, meta.items));
});

/** The session and history a new response runs with: a new session, the previous one's, or a fork. */
async function _place(
  c: Context<App>,
  turn: ResponseTurn,
  newSession: () => string,
): Promise<_Placement> {
  const previous = turn.meta.previous_response_id;
  if (previous === null) return { session: newSession(), seed: turn.earlier, continues: false };
  const found = await _lookup(c, previous, true);
  const turns = found?.record.turns;
  if (!found || turns === undefined) throw _notFound("previous_response_id: no such response");
  if (turns === null) {
    throw new RequestError(
      400,
      `previous_response_id: the response is ${responseStatus(found.record.state)}, not completed`,
      "invalid_request_error",
    );
  }
  // The previous response's session takes the turn only when that response is still its latest
  // turn and it is idle (the session re-checks as it stores the message); else a fork.
  if (!turn.earlier.length) return { session: found.session, seed: turns, continues: true };
  return { session: newSession(), seed: [...turns, ...turn.earlier], continues: false };
}

function _message(tenant: string, turn: ResponseTurn, placement: _Placement): InboundMessage {
  return {
    text: turn.input,
    context: _context(tenant, placement.session),
    ...(turn.system ? { system: turn.system } : {}),
    ...(placement.seed.length ? { seed: placement.seed } : {}),
    ...(turn.params ? { params: turn.params } : {}),
    ...(turn.clientTools.length ? { clientTools: turn.clientTools } : {}),
    ...(turn.toolResults.length ? { toolResults: turn.toolResults } : {}),
    ...(placement.continues ? { continuesSeed: true } : {}),
    events: true,
    meta: { ...turn.meta },
  };
}

type _Found = {
  id: string;
  session: string;
  seq: number;
  /** The caller's tenant's context of `session`. */
  context: _Context;
  record: MessageRecord & { turns?: ChatMessage[] | null };
  meta: ResponseMeta;
};

/** The response `id` names, if it exists, was stored and is the Responses API's. */
async function _lookup(c: Context<App>, id: string, withTurns = false): Promise<_Found | null> {
  const parsed = parseResponseId(id);
  const tenant = c.var.tenant.name;
  if (!parsed || (parsed.tenant !== null && parsed.tenant !== tenant)) return null;
  const { session, seq } = parsed;
  const context = _context(tenant, session);
  const stub = sessionStub(c.env, context.session_key);
  // The RPC's inferred type gives up on `unknown` fields (meta): it is the method's return type.
  const record = await stub.response(seq, context, withTurns) as
    | _Found["record"]
    | null;
  const meta = record?.message.meta;
  if (!record || !isResponseMeta(meta) || !meta.store) return null;
  return { id, session, seq, context, record, meta };
}

/** The response of the `:id` parameter, or a 404. */
async function _find(c: Context<App>): Promise<_Found> {
  const found = await _lookup(c, c.req.param("id") ?? "");
  if (!found) throw _notFound();
  return found;
}

function _object(id: string, record: MessageRecord, meta: ResponseMeta) {
  return responseObject({
    id,
    meta,
    status: responseStatus(record.state),
    ...(record.state.output !== undefined ? { output: record.state.output } : {}),
    ...(record.usage ? { usage: record.usage } : {}),
    ...(record.toolCalls ? { toolCalls: record.toolCalls } : {}),
    ...(record.truncated ? { truncated: true } : {}),
    ...(record.state.error ? { error: record.state.error } : {}),
  });
}

/**
 * A client's tools may not share a name with baton's; outputs need their calls — in the
 * previous response, or in the input when there is none.
 */
function _checkTools(turn: ResponseTurn): void {
  const ours = batonToolNames(tools);
  for (const [i, tool] of turn.clientTools.entries()) {
    if (tool.type === "function" && ours.has(tool.function.name)) {
      throw new RequestError(
        400,
        `tools.${i}.name: ${tool.function.name} is one of baton's own tools`,
        "invalid_request_error",
      );
    }
  }
  const caller = turn.earlier.at(-1);
  const called = caller?.role === "assistant" && (caller.tool_calls?.length ?? 0) > 0;
  if (turn.toolResults.length && turn.meta.previous_response_id === null && !called) {
    throw new RequestError(
      400,
      "input: function_call_output without its function_call (or previous_response_id)",
      "invalid_request_error",
    );
  }
}

function _notFound(message = "no such response"): RequestError {
  return new RequestError(404, message, "not_found");
}

type _Context = ContextFields & { session_key: string };

/** The context of API session `session` of `tenant`; its `session_key` names the session object. */
function _context(tenant: string, session: string): _Context {
  return { platform: "api", chat_id: session, session_key: tenantSessionKey(tenant, session) };
}

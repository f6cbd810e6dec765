// The OpenAI Responses API over the session objects: create (the Responses codec on the OpenAI pipeline; JSON, SSE, background), retrieve, delete, cancel, input items; Workers.
import { type Context, Hono } from "hono";
import type { AttachedFile, ChatMessage } from "../lib/agent/mod.ts";
import {
  inputItemsList,
  isResponseMeta,
  outputFileItems,
  parseResponseId,
  responseId,
  type ResponseMeta,
  responseObject,
  responseRequest,
  responseStatus,
  responseStreamFrames,
  type ResponseTurn,
  responseTurn,
} from "../lib/openai/mod.ts";
import type { ContextFields } from "../lib/runtime/mod.ts";
import type { MessageRecord } from "../lib/session/mod.ts";
import { type App, parseJson, RequestError, requireApiKey } from "./_http.ts";
import { requestedModel } from "./_model_choice.ts";
import { apiTurnQuota } from "./_api_quota.ts";
import { apiImages, storeApiImages } from "./_api_images.ts";
import { replyFiles } from "./_api_files.ts";
import { capTextBytes } from "./_body_limit.ts";
import { newSessionId, requestIdentity } from "./_idempotency.ts";
import {
  type ApiCodec,
  apiContext,
  type ApiTurn,
  checkClientTools,
  orphanToolResults,
  type Placement,
  runApiTurn,
  type TurnAt,
} from "./_openai_pipeline.ts";
import { sessionStub } from "./session_client.ts";

/**
 * Routes under /v1/responses, each behind the API key. A response id names its tenant and session
 * id: another tenant's response is a 404. An id naming no tenant (from before they were named) is
 * the caller's: its session key comes from the caller's tenant.
 */
export const responseRoutes = new Hono<App>();

responseRoutes.post("/", requireApiKey, apiTurnQuota, async (c) => {
  const body = new Uint8Array(await c.req.arrayBuffer());
  const request = parseJson(responseRequest, body);
  capTextBytes(body, request);
  if (request.background && request.store === false) {
    throw new RequestError(400, "background: requires store: true", "invalid_request_error");
  }
  const model = requestedModel(c.var.config, request.model);
  const parsed = responseTurn(request, model ?? c.var.config.llmModel, Date.now());
  if (typeof parsed === "string") throw new RequestError(400, parsed, "invalid_request_error");
  const { meta } = parsed;
  const turn: ApiTurn = {
    ...(model ? { model } : {}),
    input: parsed.input,
    system: parsed.system,
    toolResults: parsed.toolResults,
    clientTools: parsed.clientTools,
    ...(parsed.params ? { params: parsed.params } : {}),
    meta: { ...meta },
    events: true,
  };
  checkClientTools(turn.clientTools, c.var.deployment.toolNames, (i) => `tools.${i}.name`);
  if (orphanToolResults(turn, parsed.earlier, meta.previous_response_id !== null)) {
    throw new RequestError(
      400,
      "input: function_call_output without its function_call (or previous_response_id)",
      "invalid_request_error",
    );
  }
  // Images checked before anything is stored or claimed: a refused one is a 400, no turn.
  const images = apiImages(c, parsed.earlier, parsed.media);
  const identity = await requestIdentity(c, "responses", body);
  const newSession = () => newSessionId(identity, "r");
  const placed = await _place(c, parsed, newSession);
  // Stored under the session that runs the turn: the message holds references, never bytes.
  const stored = await storeApiImages(c, images, placed.placement.session);
  const placement = { ...placed.placement, seed: stored.inMessages(placed.placement.seed) };
  const fork = async () => {
    const forked = await placed.fork();
    return { ...forked, seed: stored.inMessages(forked.seed) };
  };
  const delivery = request.stream ? "stream" : request.background ? "background" : "plain";
  return await runApiTurn(
    c,
    {
      turn: { ...turn, ...(stored.media.length ? { media: stored.media } : {}) },
      identity,
      delivery,
      placement,
      fork,
    },
    _responsesCodec(c, meta),
  );
});

responseRoutes.get("/:id", requireApiKey, async (c) => {
  const { id, record, meta } = await _find(c);
  return c.json(await _withFiles(c, _object(id, record, meta), record.files));
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

/**
 * Where a new response runs: a new session (seeded with the input's earlier items), or the
 * previous response's session, continued by reference — the message goes there at once with the
 * previous response's number, and the session stores it only if that response was stored, is not
 * deleted and still ends its conversation: one RPC when the conversation simply goes on. Its
 * `fork`, for when the session refuses, looks the response up (a second RPC, only then): a 404 or a
 * 400 when it cannot be continued, else a new session seeded with the conversation through it.
 * Input items beside `previous_response_id` make a new history: a new session seeded with both.
 */
async function _place(
  c: Context<App>,
  turn: ResponseTurn,
  newSession: () => string,
): Promise<{ placement: Placement; fork: () => Promise<Placement> }> {
  const previous = turn.meta.previous_response_id;
  const unused = () => Promise.reject(new Error("only a continuation forks"));
  if (previous === null) {
    return { placement: { session: newSession(), seed: turn.earlier }, fork: unused };
  }
  const at = _parse(c, previous);
  if (!at) throw _notFound("previous_response_id: no such response");
  const turnsThrough = async (): Promise<ChatMessage[]> => {
    const found = await _lookup(c, previous, true);
    if (!found) throw _notFound("previous_response_id: no such response");
    if (!found.record.turns) {
      throw new RequestError(
        400,
        `previous_response_id: the response is ${
          responseStatus(found.record.state)
        }, not completed`,
        "invalid_request_error",
      );
    }
    return found.record.turns;
  };
  if (turn.earlier.length) {
    const seed = [...await turnsThrough(), ...turn.earlier];
    return { placement: { session: newSession(), seed }, fork: unused };
  }
  const fork = async (): Promise<Placement> => ({
    session: newSession(),
    seed: await turnsThrough(),
  });
  // Tried there even when it has moved on: that session holds this request's replay, if it is one.
  return { placement: { session: at.session, seed: [], continues: at.seq }, fork };
}

/** The Responses codec: a response object (JSON, or queued for a background one) or its SSE events. */
function _responsesCodec(c: Context<App>, meta: ResponseMeta): ApiCodec {
  const id = (at: TurnAt) => responseId(c.var.tenant.name, at.placement.session, at.seq);
  return {
    frames: (at) => Promise.resolve(responseStreamFrames(id(at), meta)),
    completed: async (at, outcome) => {
      const { reply: output, usage, toolCalls, truncated } = outcome;
      const state = { status: "completed" as const, output, toolCalls, truncated, usage };
      return await _withFiles(c, responseObject({ id: id(at), meta, ...state }), outcome.files);
    },
    queued: (at) => responseObject({ id: id(at), meta, status: "queued" }),
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

/** The session and seq response `id` names, when it is an id of the caller's tenant. */
function _parse(c: Context<App>, id: string): { session: string; seq: number } | null {
  const parsed = parseResponseId(id);
  const tenant = c.var.tenant.name;
  if (!parsed || (parsed.tenant !== null && parsed.tenant !== tenant)) return null;
  return { session: parsed.session, seq: parsed.seq };
}

/**
 * The response `id` names, if it exists, was stored and is the Responses API's; `withTurns` adds
 * the conversation through it (null unless it completed).
 */
async function _lookup(c: Context<App>, id: string, withTurns = false): Promise<_Found | null> {
  const at = _parse(c, id);
  if (!at) return null;
  const { session, seq } = at;
  const context = apiContext(c.var.tenant.name, session);
  const stub = sessionStub(c.env, context.session_key);
  // The RPC's inferred type gives up on `unknown` fields (meta): it is the method's return type.
  const record = await stub.response(seq, context, withTurns) as _Found["record"] | null;
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

/** A response object with its turn's tool files as `output_file` items (fresh links) before its message. */
async function _withFiles<R extends { id: string; output: unknown[] }>(
  c: Context<App>,
  response: R,
  files: AttachedFile[] | undefined,
): Promise<R> {
  const linked = await replyFiles(c, files);
  if (!linked.length) return response;
  return { ...response, output: [...outputFileItems(response.id, linked), ...response.output] };
}

function _notFound(message = "no such response"): RequestError {
  return new RequestError(404, message, "not_found");
}

type _Context = ContextFields & { session_key: string };

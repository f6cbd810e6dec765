// One pipeline for both OpenAI-compatible APIs (Chat Completions, Responses): a decoded turn checked, placed, forked when its session moved on, run plain, streamed or queued; the routes keep only their codecs; Workers.
import type { Context } from "hono";
import { tenantSessionKey } from "../lib/api/mod.ts";
import type { ChatMessage, ModelParams } from "../lib/agent/mod.ts";
import { RUN_ID_HEADER, runId } from "../lib/openai/mod.ts";
import type { ContextFields, SseEvent } from "../lib/runtime/mod.ts";
import type { MediaItem } from "../lib/media/mod.ts";
import type { InboundMessage, RunEvent, TurnOutcome } from "../lib/session/mod.ts";
import { type App, failureStatus, jsonError, RequestError } from "./_http.ts";
import { heldReply } from "./_held_reply.ts";
import { DROPPED_MESSAGE, messageDropped } from "./_message_hook.ts";
import { relayEventStream } from "./_run_events.ts";
import { openStreamSlot } from "./_tenant_caps.ts";
import { requestSpend } from "./_api_quota.ts";
import { runMessage, submitAndSubscribe, submitMessage } from "./session_client.ts";

/** The client's own function tools, as both APIs hand them to the session. */
export type ClientTools = NonNullable<InboundMessage["clientTools"]>;

/** A decoded API request's turn, whichever API it came in. */
export interface ApiTurn {
  /** The last user message's text ("" when the turn continues on tool results). */
  input: string;
  /** The last user message's images, stored (functions/_api_images.ts): references only. */
  media?: MediaItem[];
  system: string;
  /** The client's answers to the tool calls that ended its previous turn: this turn's input. */
  toolResults: ChatMessage[];
  clientTools: ClientTools;
  params?: ModelParams;
  /** The request's `model`, allowed by `MODELS` (functions/_model_choice.ts); unset: the default. */
  model?: string;
  /** The caller's end-user (Chat Completions' `user`): the context's `user_id` when set. */
  user?: string;
  /** Stored with the message (the Responses API's metadata, read back by its retrieval). */
  meta?: Record<string, unknown>;
  /** Record run events whatever the delivery (a Responses run can be retrieved or cancelled later). */
  events?: boolean;
}

/** Where an API turn runs. */
export interface Placement {
  /** The API session id; with the caller's tenant it names the session object. */
  session: string;
  /** The history the session starts with when it has none yet. */
  seed: ChatMessage[];
  /**
   * What the session must still hold for the turn to run there, else it runs in the fork:
   * `"seed"`, a conversation that is exactly `seed`; a number, a conversation that turn still
   * ends (by reference: the seed is not sent). Absent: the turn runs there whatever it holds.
   */
  continues?: "seed" | number;
}

/** A stored turn: where it runs, its seq there and its run id. */
export interface TurnAt {
  placement: Placement;
  seq: number;
  /** `X-Baton-Run-Id`: the run's tenant-unique id. */
  run: string;
}

/** A plain turn's completed outcome. */
export type Completed = Extract<TurnOutcome, { status: "completed" }>;

/** How an API renders what the pipeline produced: its wire format, on the pipeline's far end. */
export interface ApiCodec {
  /** The translation of stored turn `at`'s run events into its API's SSE frames. */
  frames(at: TurnAt): Promise<(event: RunEvent) => SseEvent[] | Promise<SseEvent[]>>;
  /** The JSON body of a plain turn that completed. */
  completed(at: TurnAt, outcome: Completed): Promise<unknown>;
  /** The JSON body of a background turn just stored (only an API that has background turns). */
  queued?(at: TurnAt): unknown;
}

/** A request's turn as the pipeline takes it from a codec. */
export interface ApiTurnRequest {
  turn: ApiTurn;
  /** The request's identity (`requestIdentity`): its hash, and its Idempotency-Key's delivery key. */
  identity: { requestHash: string; deliveryKey?: string };
  /** `plain`: the outcome as one JSON body; `stream`: the run's events as SSE; `background`: stored, answered at once. */
  delivery: "plain" | "stream" | "background";
  placement: Placement;
  /** Where the turn runs instead when `placement`'s session refuses it (its conversation moved on). */
  fork: () => Placement | Promise<Placement>;
}

/**
 * Refuses (400) a client tool named like one of baton's (`ours`: the deployment's `toolNames`);
 * `path` names the request field of the tool at an index, as its API spells it.
 */
export function checkClientTools(
  clientTools: ClientTools,
  ours: ReadonlySet<string>,
  path: (index: number) => string,
): void {
  for (const [i, tool] of clientTools.entries()) {
    if (tool.type === "function" && ours.has(tool.function.name)) {
      throw new RequestError(
        400,
        `${path(i)}: ${tool.function.name} is one of baton's own tools`,
        "invalid_request_error",
      );
    }
  }
}

/**
 * Whether a turn's tool results arrive without the assistant message that called them: the last
 * of the request's `earlier` messages, unless the turn continues a stored conversation (`stored`).
 */
export function orphanToolResults(turn: ApiTurn, earlier: ChatMessage[], stored: boolean): boolean {
  if (!turn.toolResults.length || stored) return false;
  const caller = earlier.at(-1);
  return !(caller?.role === "assistant" && (caller.tool_calls?.length ?? 0) > 0);
}

/** The context of API session `session` of `tenant`; its `session_key` names the session object. */
export function apiContext(
  tenant: string,
  session: string,
): ContextFields & { session_key: string } {
  return { platform: "api", chat_id: session, session_key: tenantSessionKey(tenant, session) };
}

/**
 * Runs a request's turn and answers it in `codec`'s format. The turn goes to its placement, and
 * to the fork when that session's conversation moved on (once); a stream takes a tenant stream
 * slot first (refused: no turn starts). A plain turn that fails answers with its error status and
 * `x-should-retry: false` (it ran: a retry would run it again); one that pauses for approval
 * answers its headers at once and its body when it ends (`heldReply`).
 */
export async function runApiTurn(
  c: Context<App>,
  request: ApiTurnRequest,
  codec: ApiCodec,
): Promise<Response> {
  const tenant = c.var.tenant.name;
  const pipe: _Pipe = {
    c,
    request,
    codec,
    // With TENANT_TOKENS_PER_DAY's reservation (apiTurnQuota), settled after the turn.
    message: (placement) => ({
      ..._message(tenant, request.turn, placement, request.identity, request.delivery === "stream"),
      ...requestSpend(c),
    }),
    at: (placement, seq) => ({ placement, seq, run: runId(tenant, placement.session, seq) }),
  };
  // The deployment's messageReceived hook, before anything is stored or a stream slot taken.
  if (await messageDropped(c, pipe.message(request.placement), "api")) {
    return jsonError(c, 422, DROPPED_MESSAGE, "message_dropped");
  }
  return request.delivery === "plain" ? await _plain(pipe) : await _stored(pipe);
}

/** One request's way through the pipeline: its message at a placement, its stored turn's names. */
interface _Pipe {
  c: Context<App>;
  request: ApiTurnRequest;
  codec: ApiCodec;
  message: (placement: Placement) => InboundMessage;
  at: (placement: Placement, seq: number) => TurnAt;
}

/** A streamed or background turn: stored (not awaited), then relayed as SSE or answered queued. */
async function _stored({ c, request, codec, message, at }: _Pipe): Promise<Response> {
  const stream = request.delivery === "stream";
  const slot = stream ? await openStreamSlot(c) : undefined;
  const stored = await _placed(request, async (placement) => {
    const inbound = message(placement);
    const key = inbound.context.session_key!;
    // A stream's turn is stored and its events subscribed in one RPC, before its model call.
    const { receipt, events } = stream
      ? await submitAndSubscribe(c.env, key, inbound)
      : { receipt: await submitMessage(c.env, key, inbound, true), events: null };
    return receipt.refused === "history_mismatch" ? "history_mismatch" : { ...receipt, events };
  }).catch((error) => {
    slot?.release();
    throw error;
  });
  const turn = at(stored.placement, stored.result.seq);
  const headers = { "X-Session-Id": turn.placement.session, [RUN_ID_HEADER]: turn.run };
  if (!stream) return c.json(codec.queued?.(turn) ?? {}, 200, headers);
  const { events } = stored.result;
  if (!events) {
    slot?.release();
    throw new RequestError(409, "the message was not stored as a run; retry", "conflict");
  }
  let translate: Awaited<ReturnType<ApiCodec["frames"]>>;
  try {
    translate = await codec.frames(turn);
  } catch (error) {
    slot?.release();
    void events.cancel().catch(() => {});
    throw error;
  }
  return relayEventStream(events, translate, headers, c.var.config.keepAliveMs, slot);
}

/** A plain turn: stored and awaited in one call per attempt, answered as one JSON body. */
async function _plain({ c, request, codec, message, at }: _Pipe): Promise<Response> {
  const respond = async (run: { placement: Placement; seq: number; outcome: TurnOutcome }) => {
    const headers = { "X-Session-Id": run.placement.session };
    if (run.outcome.status === "failed") {
      // The turn ran (or was stopped): a client retry would run it again, so clients must not retry.
      const noRetry = { ...headers, "x-should-retry": "false" };
      return c.json({ error: run.outcome.error }, failureStatus(run.outcome.error), noRetry);
    }
    return c.json(await codec.completed(at(run.placement, run.seq), run.outcome), 200, headers);
  };
  // A turn that pauses for approval gets its headers (the run id) at once and its body when done.
  return await heldReply(
    async (onPaused) => {
      const ran = await _placed(request, (placement) => {
        const inbound = message(placement);
        const paused = (seq: number) => onPaused(placement, seq);
        return runMessage(c.env, inbound.context.session_key!, inbound, paused);
      });
      return { placement: ran.placement, ...ran.result };
    },
    respond,
    (placement) => placement.session,
    c.var.tenant.name,
    c.var.config.keepAliveMs,
  );
}

/**
 * The one fork loop: `attempt` at the request's placement, and once more at its fork when that
 * session answers `history_mismatch` (a fork is a new session: it cannot refuse so).
 */
async function _placed<T>(
  request: ApiTurnRequest,
  attempt: (placement: Placement) => Promise<T | "history_mismatch">,
): Promise<{ placement: Placement; result: T }> {
  const first = await attempt(request.placement);
  if (first !== "history_mismatch") return { placement: request.placement, result: first };
  const placement = await request.fork();
  const result = await attempt(placement);
  if (result === "history_mismatch") throw new Error("a new session refused its first message");
  return { placement, result };
}

/** The message of `turn` at `placement`: what the session stores and runs. */
function _message(
  tenant: string,
  turn: ApiTurn,
  placement: Placement,
  identity: ApiTurnRequest["identity"],
  streamed: boolean,
): InboundMessage {
  const { continues } = placement;
  // A continuation by reference sends no history: the session holds it.
  const seed = typeof continues === "number" ? [] : placement.seed;
  return {
    text: turn.input,
    ...(turn.media?.length ? { media: turn.media } : {}),
    context: {
      ...apiContext(tenant, placement.session),
      ...(turn.user !== undefined ? { user_id: turn.user } : {}),
    },
    ...(turn.system ? { system: turn.system } : {}),
    ...(seed.length ? { seed } : {}),
    ...(turn.params ? { params: turn.params } : {}),
    ...(turn.model ? { model: turn.model } : {}),
    ...(turn.clientTools.length ? { clientTools: turn.clientTools } : {}),
    ...(turn.toolResults.length ? { toolResults: turn.toolResults } : {}),
    ...(continues === "seed" ? { continuesSeed: true } : {}),
    ...(typeof continues === "number" ? { continuesAfter: continues } : {}),
    requestHash: identity.requestHash,
    ...(identity.deliveryKey ? { deliveryKey: identity.deliveryKey } : {}),
    ...(turn.events || streamed ? { events: true } : {}),
    ...(turn.meta ? { meta: turn.meta } : {}),
  };
}

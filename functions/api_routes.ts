// OpenAI-compatible API routes: chat completions (the Chat Completions codec on the OpenAI pipeline; JSON and SSE), models, session state; Workers.
import { type Context, Hono } from "hono";
import { mayAddressSession, tenantSessionKey } from "../lib/api/mod.ts";
import {
  chatCompletion,
  chatCompletionChunk,
  type ChatCompletionRequest,
  chatCompletionRequest,
  chatCompletionUsageChunk,
  type ChatTurnInput,
  chatTurnInput,
  completionId,
  modelObject,
  modelParams,
  SESSION_ID,
} from "../lib/openai/mod.ts";
import type { RunEvent } from "../lib/session/mod.ts";
import type { SessionInspection } from "../lib/session/session_inspector.ts";
import { errorText, log, type SseEvent } from "../lib/runtime/mod.ts";
import { newChatPlacement, placeChat, rememberChat } from "./_conversations.ts";
import { requestIdentity } from "./_idempotency.ts";
import { listDirectory } from "./_directory.ts";
import { parseDirectoryQuery } from "../lib/session/directory_query.ts";
import { eraseSessionEverywhere } from "./_erasure.ts";
import {
  type ApiCodec,
  type ApiTurn,
  checkClientTools,
  orphanToolResults,
  runApiTurn,
  type TurnAt,
} from "./_openai_pipeline.ts";
import { type App, parseJson, RequestError, requireApiKey, sessionKeyParam } from "./_http.ts";
import { apiTurnQuota } from "./_api_quota.ts";
import { apiImages, storeApiImages } from "./_api_images.ts";
import { replyFiles } from "./_api_files.ts";
import { capTextBytes } from "./_body_limit.ts";
import { requestedModel } from "./_model_choice.ts";
import { sessionStub } from "./session_client.ts";
import { usageRoute } from "./usage_route.ts";
import { sessionMediaRoute } from "./session_media_route.ts";

/** Routes under /v1, each behind the API key. */
export const apiRoutes = new Hono<App>();

apiRoutes.get("/models", requireApiKey, (c) => {
  return c.json({ object: "list", data: _servedModels(c).map(modelObject) });
});

apiRoutes.get("/models/:id", requireApiKey, (c) => {
  const served = _servedModels(c);
  if (!served.includes(c.req.param("id"))) {
    throw new RequestError(
      404,
      `no model ${c.req.param("id")}; this gateway serves ${served.join(", ")}`,
      "model_not_found",
    );
  }
  return c.json(modelObject(c.req.param("id")));
});

/** The models a caller may name: `LLM_MODEL`, then `MODELS`. */
function _servedModels(c: Context<App>): string[] {
  const { llmModel, models } = c.var.config;
  return [llmModel, ...models.filter((m) => m !== llmModel)];
}

// A day's tokens and cost: the tenant's own, a session's, or (admin keys) everyone's.
apiRoutes.get("/usage", requireApiKey, usageRoute);

// The session directory (D1): optional, so a deployment without it answers 503, not 500.
apiRoutes.get("/sessions", requireApiKey, async (c) => {
  const query = parseDirectoryQuery(c.req.query());
  if (typeof query === "string") throw new RequestError(400, query, "invalid_request_error");
  const db = c.env.DIRECTORY;
  if (!db) {
    throw new RequestError(
      503,
      "the session directory is not configured: add the DIRECTORY D1 binding (see docs/guides/session-directory.md)",
      "not_configured",
    );
  }
  const { tenant } = c.var;
  try {
    return c.json(await listDirectory(db, { tenant: tenant.name, platform: tenant.admin }, query));
  } catch (error) {
    log.error("directory not read", { error: errorText(error) });
    throw new RequestError(503, "the session directory is unavailable; retry", "unavailable");
  }
});

apiRoutes.get("/sessions/:key", requireApiKey, async (c) => {
  const key = _addressableKey(c);
  const snapshot = await sessionStub(c.env, key).snapshot({ session_key: key });
  if (!snapshot) throw new RequestError(404, "no such session", "not_found");
  return c.json({ key, ...snapshot });
});

// Erasure: the running turn stopped, then everything of the session gone; its id is 404 until a
// new message starts it afresh. A repeat is 404 too: nothing of it is left.
apiRoutes.delete("/sessions/:key", requireApiKey, async (c) => {
  const key = _addressableKey(c);
  const { erased, stopped } = await eraseSessionEverywhere(c.env, key);
  if (!erased) throw new RequestError(404, "no such session", "not_found");
  return c.json({ key, erased: true, stopped });
});

// The console's inspector: read-only, tenant-scoped like the session itself.
apiRoutes.get("/sessions/:key/inspect", requireApiKey, async (c) => {
  const key = _addressableKey(c);
  // The RPC type drops `unknown` fields (event data, context): the value is as the object built it.
  const inspection = await sessionStub(c.env, key).inspect({ session_key: key }) as
    | SessionInspection
    | null;
  if (!inspection) throw new RequestError(404, "no such session", "not_found");
  return c.json({ key, ...inspection });
});

// The console's images and files of a session: bytes behind the key, scoped like the session.
apiRoutes.get("/sessions/:key/media/:scope/:hash", requireApiKey, sessionMediaRoute);

for (const command of ["stop", "reset"] as const) {
  apiRoutes.post(`/sessions/:key/${command}`, requireApiKey, async (c) => {
    const key = _addressableKey(c);
    const result = await sessionStub(c.env, key).control(command, { session_key: key });
    if (!result) throw new RequestError(404, "no such session", "not_found");
    return c.json({ key, status: command === "stop" ? "stopped" : "reset", ...result });
  });
}

apiRoutes.post("/chat/completions", requireApiKey, apiTurnQuota, async (c) => {
  const body = new Uint8Array(await c.req.arrayBuffer());
  const request = parseJson(chatCompletionRequest, body);
  capTextBytes(body, request);
  const input = chatTurnInput(request);
  if (typeof input === "string") throw new RequestError(400, input, "invalid_request_error");
  const params = modelParams(request);
  const model = requestedModel(c.var.config, request.model);
  const turn: ApiTurn = {
    ...(model ? { model } : {}),
    input: input.input,
    system: input.system,
    toolResults: input.toolResults,
    clientTools: request.tools ?? [],
    ...(params ? { params } : {}),
    user: request.user ?? "",
  };
  checkClientTools(turn.clientTools, c.var.deployment.toolNames, (i) => `tools.${i}.function.name`);
  const header = c.req.header("x-session-id");
  if (header !== undefined && !SESSION_ID.test(header)) {
    throw new RequestError(
      400,
      "X-Session-Id: 1-128 characters of [A-Za-z0-9._:-]",
      "invalid_request_error",
    );
  }
  if (orphanToolResults(turn, input.seed, header !== undefined)) {
    throw new RequestError(
      400,
      "messages: tool results without the assistant message that called the tools",
      "invalid_request_error",
    );
  }
  // Images checked before anything is stored or claimed: a refused one is a 400, no turn.
  const images = apiImages(c, input.seed, input.media);
  // The request as a client would retry it, and its Idempotency-Key (claimed, or a 422).
  const identity = await requestIdentity(c, "chat", body);
  const placed = await placeChat(c, header, input);
  // Stored under the session that runs the turn: the message holds references, never bytes.
  const stored = await storeApiImages(c, images, placed.session);
  const seed = stored.inMessages(input.seed);
  return await runApiTurn(c, {
    turn: { ...turn, ...(stored.media.length ? { media: stored.media } : {}) },
    identity,
    delivery: request.stream ? "stream" : "plain",
    placement: { ...placed, seed },
    fork: () => newChatPlacement(seed),
  }, _chatCodec(c, request, input, header));
});

/**
 * The Chat Completions codec: a completion (JSON) or its chunks (SSE). Only a turn that starts
 * from a user message and ends in text leaves a state a client's next request can name (pointed
 * at before the answer goes out); around client tool calls each request runs in a new seeded
 * session.
 */
function _chatCodec(
  c: Context<App>,
  request: ChatCompletionRequest,
  input: ChatTurnInput,
  header: string | undefined,
): ApiCodec {
  // The chosen model is echoed; a fallback that answered instead is in the run's events.
  const model = requestedModel(c.var.config, request.model) ?? c.var.config.llmModel;
  const remember = async (at: TurnAt, reply: string, toolCalls?: unknown[]) => {
    if (header !== undefined || input.toolResults.length || toolCalls?.length) return;
    await rememberChat(c, input, reply, at.placement.session);
  };
  const id = (at: TurnAt) =>
    completionId(tenantSessionKey(c.var.tenant.name, at.placement.session), at.seq);
  return {
    async frames(at) {
      const includeUsage = request.stream_options?.include_usage === true;
      const onCompleted = (reply: string, toolCalls: unknown[]) => remember(at, reply, toolCalls);
      return _completionFrames(await id(at), model, includeUsage, onCompleted, at.run);
    },
    async completed(at, result) {
      await remember(at, result.reply, result.toolCalls);
      const { reply, usage, toolCalls, truncated } = result;
      const body = chatCompletion(await id(at), model, reply, usage, toolCalls, truncated);
      // The tools' files as links on the message: an extension field OpenAI clients pass over.
      const files = await replyFiles(c, result.files);
      if (!files.length) return body;
      const [choice] = body.choices;
      return { ...body, choices: [{ ...choice, message: { ...choice.message, files } }] };
    },
  };
}

/**
 * The `:key` session key, when the caller's tenant may address it (its own API sessions; any for an
 * admin tenant). Another's is a 404, as for every resource of another tenant: a 403 would tell
 * that the session exists and is someone else's.
 */
function _addressableKey(c: Context<App>): string {
  const key = sessionKeyParam(c);
  if (!mayAddressSession(c.var.tenant, key)) {
    throw new RequestError(404, "no such session", "not_found");
  }
  return key;
}

/**
 * Maps run events onto the OpenAI stream: text deltas only; tool events never reach it. With
 * `includeUsage`, every chunk carries `usage: null` and a last chunk carries the turn's usage.
 * An approval question (and its answer) is an empty-delta chunk with a `baton_approval` field
 * naming run `run`: OpenAI clients pass it over, a UI can show the question and answer it.
 */
function _completionFrames(
  id: string,
  model: string,
  includeUsage: boolean,
  onCompleted: (reply: string, toolCalls: unknown[]) => Promise<void>,
  run: string,
): (event: RunEvent) => Promise<SseEvent[]> {
  const chunk = (
    delta: { role?: "assistant"; content?: string; tool_calls?: unknown[] },
    finish: "stop" | "tool_calls" | "length" | null = null,
  ) => chatCompletionChunk(id, model, delta, finish, includeUsage);
  return async (event) => {
    switch (event.type) {
      case "run.started":
        return [{ data: chunk({ role: "assistant", content: "" }) }];
      case "message.delta":
        return [{ data: chunk({ content: String(event.data.delta ?? "") }) }];
      case "approval.request":
      case "approval.responded":
        return [{
          data: { ...chunk({}), baton_approval: { type: event.type, run_id: run, ...event.data } },
        }];
      case "run.completed": {
        const toolCalls = Array.isArray(event.data.tool_calls) ? event.data.tool_calls : [];
        await onCompleted(String(event.data.output ?? ""), toolCalls);
        const usage = _usage(event.data.usage);
        // A client tool call goes out whole in one delta (its arguments complete), then the finish.
        const calls = toolCalls.map((call, index) => ({ index, ...(call as object) }));
        return [
          ...(calls.length ? [{ data: chunk({ tool_calls: calls }) }] : []),
          {
            data: chunk(
              {},
              calls.length ? "tool_calls" : event.data.truncated === true ? "length" : "stop",
            ),
          },
          ...(includeUsage ? [{ data: chatCompletionUsageChunk(id, model, usage) }] : []),
          { data: "[DONE]" },
        ];
      }
      case "run.failed":
        return [{ data: { error: event.data.error } }, { data: "[DONE]" }];
      case "run.cancelled":
        return [{ data: { error: { message: "the turn was cancelled", type: "cancelled" } } }, {
          data: "[DONE]",
        }];
      default:
        return [];
    }
  };
}

/** A run event's usage, or zeros for an event from before usage was recorded. */
function _usage(value: unknown): { prompt_tokens: number; completion_tokens: number } {
  const usage = value as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) ? n : 0);
  return {
    prompt_tokens: count(usage?.prompt_tokens),
    completion_tokens: count(usage?.completion_tokens),
  };
}

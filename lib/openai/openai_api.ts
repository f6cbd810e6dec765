// OpenAI Chat Completions shapes: request schema, session id rules, response and chunk builders; runtime-neutral.
import * as z from "zod";
import { type ChatMessage, messageText, type ModelParams, type ToolCall } from "../agent/mod.ts";
import { jsonSchemaObject } from "../runtime/mod.ts";
import type { MediaPart } from "../media/mod.ts";
import { withImageParts } from "./image_parts.ts";
import { chatMediaParts } from "./media_parts.ts";

/** The model parameters a request may set (`modelParams` reads them without building the schema). */
const _MODEL_PARAM_NAMES = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "reasoning_effort",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
] as const satisfies readonly (keyof ModelParams)[];

/**
 * A Chat Completions request; fields baton does not use are accepted and ignored. Built on the
 * first parse (`z.lazy`): a start-up builds none of its parts.
 */
export const chatCompletionRequest = z.lazy(_chatCompletionRequest);

/** Builds `chatCompletionRequest` (its parts are private to it). */
function _chatCompletionRequest() {
  const _contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

  const _toolCall = z.looseObject({
    id: z.string().min(1).max(256),
    type: z.literal("function"),
    function: z.looseObject({ name: z.string().max(256), arguments: z.string().max(1_000_000) }),
  });

  const _message = z.looseObject({
    role: z.enum(["system", "developer", "user", "assistant", "tool"]),
    content: z.union([z.string(), z.array(_contentPart), z.null()]).optional(),
    tool_calls: z.array(_toolCall).max(128).optional(),
    tool_call_id: z.string().min(1).max(256).optional(),
  });

  const _TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

  /** A client's function tool, in the Chat Completions shape. */
  const _functionTool = z.object({
    type: z.literal("function"),
    function: z.object({
      name: z.string().regex(_TOOL_NAME, "1-64 characters of [A-Za-z0-9_-]"),
      description: z.string().max(10_000).optional(),
      parameters: jsonSchemaObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  });

  const _jsonSchemaFormat = z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 characters of [A-Za-z0-9_-]"),
      description: z.string().max(10_000).optional(),
      schema: jsonSchemaObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  });

  /** The model parameters a request may set, with OpenAI's ranges: exactly `_MODEL_PARAM_NAMES`. */
  const _modelParams = {
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).nullable().optional(),
    tool_choice: z.union([
      z.enum(["none", "auto", "required"]),
      z.object({ type: z.literal("function"), function: z.object({ name: z.string().max(64) }) }),
    ]).nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    response_format: z.union([
      z.object({ type: z.literal("text") }),
      z.object({ type: z.literal("json_object") }),
      _jsonSchemaFormat,
    ]).nullable().optional(),
  } satisfies Record<(typeof _MODEL_PARAM_NAMES)[number], z.ZodType>;

  return z.looseObject({
    ..._modelParams,
    tools: z.array(_functionTool).max(128).nullable().optional(),
    model: z.string().max(256).optional(),
    messages: z.array(_message).min(1).max(10_000),
    stream: z.boolean().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable()
      .optional(),
    user: z.string().max(256).optional(),
  });
}

/** A parsed Chat Completions request. */
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

/** Session ids accepted from callers: 1–128 of [A-Za-z0-9._:-]. */
export const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's session id in a request body: `SESSION_ID`, with the rule in the error. */
export const sessionIdField = z.string().regex(SESSION_ID, "1-128 characters of [A-Za-z0-9._:-]");

/** The parts of a request a turn needs. */
export interface ChatTurnInput {
  /** The last user message's text ("" when the turn continues on tool results). */
  input: string;
  /** The client's answers to its tools' calls, when the request ends with them: the turn's input. */
  toolResults: ChatMessage[];
  system: string;
  /**
   * Earlier messages: the seed of a new session, and what a continued one must hold. A user
   * message's image parts are in its `media` (lib/media/ `MediaPart`s, stored by the route).
   */
  seed: ChatMessage[];
  /** The last user message's media parts (`image_url`, `input_audio`, `file`), unchecked: the route checks and stores them. */
  media: MediaPart[];
}

/**
 * Splits a request into the turn's input (the last user message, or the tool results that end
 * it), system text and seed; a string explains a request no turn can start from.
 */
export function chatTurnInput(request: ChatCompletionRequest): ChatTurnInput | string {
  const { messages } = request;
  const system = messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map(messageText)
    .join("\n");
  let end = messages.length;
  while (end > 0 && messages[end - 1].role === "tool") end--;
  if (end < messages.length) {
    // The assistant message that called the tools may be only in a pinned session's transcript.
    return {
      input: "",
      toolResults: messages.slice(end).map(_asHistory).filter((m) => m !== null),
      system,
      seed: _seed(messages.slice(0, end)),
      media: [],
    };
  }
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  if (lastUser < 0) return "messages: no user message";
  return {
    input: messageText(messages[lastUser]),
    toolResults: [],
    system,
    seed: _seed(messages.slice(0, lastUser)),
    media: chatMediaParts(messages[lastUser].content, lastUser),
  };
}

type _RequestMessage = ChatCompletionRequest["messages"][number];

/** Whether a turn's tool results follow, in the request itself, the assistant message that called them. */
export function callerInRequest(turn: ChatTurnInput): boolean {
  const caller = turn.seed.at(-1);
  return caller?.role === "assistant" && (caller.tool_calls?.length ?? 0) > 0;
}

/**
 * Earlier messages as history: user and assistant text (a user message's images as its `media`
 * parts), tool calls and their results kept whole. `messages` start at the request's first.
 */
function _seed(messages: _RequestMessage[]): ChatMessage[] {
  return messages.map(_asHistory).filter((m) => m !== null);
}

function _asHistory(m: _RequestMessage, index: number): ChatMessage | null {
  if (m.role === "user") {
    return withImageParts(
      { role: "user", content: messageText(m) },
      chatMediaParts(m.content, index),
    );
  }
  if (m.role === "tool") {
    return { role: "tool", tool_call_id: m.tool_call_id ?? "", content: messageText(m) };
  }
  if (m.role !== "assistant") return null;
  if (!m.tool_calls?.length) return { role: "assistant", content: messageText(m) };
  return {
    role: "assistant",
    content: messageText(m) || null,
    tool_calls: m.tool_calls.map((call) => ({
      id: call.id,
      type: "function" as const,
      function: { name: call.function.name, arguments: call.function.arguments },
    })),
  };
}

/** The model parameters a request set (nulls and absent fields left out), or undefined when none. */
export function modelParams(request: ChatCompletionRequest): ModelParams | undefined {
  const params: Record<string, unknown> = {};
  for (const name of _MODEL_PARAM_NAMES) {
    const value = (request as Record<string, unknown>)[name];
    if (value !== undefined && value !== null) params[name] = value;
  }
  return Object.keys(params).length ? params as ModelParams : undefined;
}

/**
 * The fingerprint of a conversation as a client sees it: its tenant, its system text and its
 * turns (user and assistant text, in order). A request without X-Session-Id continues the
 * session whose conversation has exactly its earlier messages' fingerprint.
 */
export async function conversationFingerprint(
  tenant: string,
  system: string,
  turns: ChatMessage[],
): Promise<string> {
  return await hashHex([tenant, system, turns.map((m) => [m.role, messageText(m)])]);
}

/** SHA-256 of `parts` (JSON-encoded) as hex, `bytes` long (at most 32). */
export async function hashHex(parts: unknown[], bytes = 20): Promise<string> {
  const data = new TextEncoder().encode(JSON.stringify(parts));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest.slice(0, bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A chat completion's id, the same for every answer about one run of one session (a retry gets
 * its first answer's id). Made from the session *key*, which names the tenant: two tenants may
 * use one X-Session-Id, and their runs must not share ids.
 */
export async function completionId(sessionKey: string, seq: number): Promise<string> {
  return `chatcmpl-${await hashHex(["completion", sessionKey, seq], 16)}`;
}

/** A non-streaming `chat.completion` response body. */
export function chatCompletion(
  id: string,
  model: string,
  reply: string,
  usage: { prompt_tokens: number; completion_tokens: number },
  toolCalls?: ToolCall[],
  truncated = false,
) {
  const finish = toolCalls?.length ? "tool_calls" : truncated ? "length" : "stop";
  const message = toolCalls?.length
    ? { role: "assistant", content: reply || null, tool_calls: toolCalls }
    : { role: "assistant", content: reply };
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** One `chat.completion.chunk` event body; with `withUsage` it carries `usage: null`, as OpenAI's do. */
export function chatCompletionChunk(
  id: string,
  model: string,
  delta: { role?: "assistant"; content?: string; tool_calls?: unknown[] },
  finishReason: "stop" | "tool_calls" | "length" | null = null,
  withUsage = false,
) {
  return {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...(withUsage ? { usage: null } : {}),
  };
}

/** The last chunk of a stream asked for with `stream_options.include_usage`: no choices, the usage. */
export function chatCompletionUsageChunk(
  id: string,
  model: string,
  usage: { prompt_tokens: number; completion_tokens: number },
) {
  return {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** The `model` object of `GET /v1/models` and `GET /v1/models/{id}`. */
export function modelObject(id: string) {
  return { id, object: "model", created: 0, owned_by: "baton" };
}

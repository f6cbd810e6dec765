// OpenAI Chat Completions shapes: request schema, session id rules, response and chunk builders; runtime-neutral.
import { z } from "zod";
import { type ChatMessage, messageText, type ModelParams } from "./chat_model.ts";

const _contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const _message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(_contentPart), z.null()]).optional(),
});

const _jsonSchemaFormat = z.object({
  type: z.literal("json_schema"),
  json_schema: z.object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 characters of [A-Za-z0-9_-]"),
    description: z.string().max(10_000).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

/** The model parameters a request may set, with OpenAI's ranges. */
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
  response_format: z.union([
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    _jsonSchemaFormat,
  ]).nullable().optional(),
};

/** A Chat Completions request; fields baton does not use are accepted and ignored. */
export const chatCompletionRequest = z.looseObject({
  ..._modelParams,
  model: z.string().max(256).optional(),
  messages: z.array(_message).min(1).max(10_000),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable()
    .optional(),
  user: z.string().max(256).optional(),
});

/** A parsed Chat Completions request. */
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

/** Session ids accepted from callers: 1–128 of [A-Za-z0-9._:-]. */
export const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's session id in a request body: `SESSION_ID`, with the rule in the error. */
export const sessionIdField = z.string().regex(SESSION_ID, "1-128 characters of [A-Za-z0-9._:-]");

/** The parts of a request a turn needs. */
export interface ChatTurnInput {
  input: string;
  system: string;
  /** Earlier user/assistant exchanges: the seed of a new session, and what a continued one must hold. */
  seed: ChatMessage[];
}

/** Splits a request into the turn's input (the last user message), system text and seed. */
export function chatTurnInput(request: ChatCompletionRequest): ChatTurnInput | null {
  const lastUser = request.messages.findLastIndex((m) => m.role === "user");
  if (lastUser < 0) return null;
  const system = request.messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map(messageText)
    .join("\n");
  const seed: ChatMessage[] = request.messages.slice(0, lastUser).flatMap((m): ChatMessage[] =>
    m.role === "user" || m.role === "assistant" ? [{ role: m.role, content: messageText(m) }] : []
  );
  return {
    input: messageText(request.messages[lastUser]),
    system,
    seed,
  };
}

/** The model parameters a request set (nulls and absent fields left out), or undefined when none. */
export function modelParams(request: ChatCompletionRequest): ModelParams | undefined {
  const params: Record<string, unknown> = {};
  for (const name of Object.keys(_modelParams)) {
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

/** A chat completion's id, the same for every answer about one run of one session. */
export async function completionId(sessionId: string, seq: number): Promise<string> {
  return `chatcmpl-${await hashHex(["completion", sessionId, seq], 16)}`;
}

/** A non-streaming `chat.completion` response body. */
export function chatCompletion(
  id: string,
  model: string,
  reply: string,
  usage: { prompt_tokens: number; completion_tokens: number },
) {
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** One `chat.completion.chunk` event body; with `withUsage` it carries `usage: null`, as OpenAI's do. */
export function chatCompletionChunk(
  id: string,
  model: string,
  delta: { role?: "assistant"; content?: string },
  finishReason: "stop" | null = null,
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

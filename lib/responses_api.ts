// OpenAI Responses API shapes: request schema, response ids, the response object and its stream events; runtime-neutral.
import { z } from "zod";
import type { ChatMessage, ModelParams } from "./chat_model.ts";
import { SESSION_ID } from "./openai_api.ts";
import type { RunEvent, RunState, TurnUsage } from "./session/types.ts";
import type { SseEvent } from "./transport.ts";

const _part = z.object({
  type: z.enum(["input_text", "output_text"]),
  text: z.string().max(1_000_000),
}).loose();

const _item = z.object({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(_part).max(1_000)]),
}).loose();

/** A `POST /v1/responses` body; fields baton does not use (model, tools, user, …) are accepted and ignored. */
export const responseRequest = z.looseObject({
  model: z.string().max(256).optional(),
  input: z.union([z.string().min(1), z.array(_item).min(1).max(10_000)]),
  instructions: z.string().max(1_000_000).nullable().optional(),
  previous_response_id: z.string().max(512).nullable().optional(),
  store: z.boolean().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  background: z.boolean().nullable().optional(),
  metadata: z.record(z.string().max(64), z.string().max(512)).refine(
    (m) => Object.keys(m).length <= 16,
    "at most 16 pairs",
  ).nullable().optional(),
  max_output_tokens: z.number().int().min(1).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
});

/** A parsed `POST /v1/responses` body. */
export type ResponseRequest = z.infer<typeof responseRequest>;

/** One input message as kept with the response (for `input_items`). */
export interface InputItem {
  role: "user" | "assistant" | "system" | "developer";
  text: string;
}

/** The request fields a response object echoes, kept with the message that runs it. */
export interface ResponseMeta {
  api: "responses";
  created_at: number;
  model: string;
  instructions: string | null;
  metadata: Record<string, string>;
  previous_response_id: string | null;
  store: boolean;
  background: boolean;
  max_output_tokens: number | null;
  temperature: number | null;
  top_p: number | null;
  items: InputItem[];
}

/** What a turn needs from a request: the input, the system text, earlier messages, the echoed fields. */
export interface ResponseTurn {
  input: string;
  system: string;
  /** Input messages before the last user message (user and assistant ones). */
  earlier: ChatMessage[];
  params?: ModelParams;
  meta: ResponseMeta;
}

/** Splits a request into its turn; a string naming the problem when the input has no last user message. */
export function responseTurn(
  request: ResponseRequest,
  model: string,
  now: number,
): ResponseTurn | string {
  const items: InputItem[] = typeof request.input === "string"
    ? [{ role: "user", text: request.input }]
    : request.input.map((item) => ({
      role: item.role,
      text: typeof item.content === "string"
        ? item.content
        : item.content.map((p) => p.text).join(""),
    }));
  const last = items.at(-1)!;
  if (last.role !== "user") return "input: the last message must be a user message";
  const system = [
    request.instructions ?? "",
    ...items.filter((i) => i.role === "system" || i.role === "developer").map((i) => i.text),
  ].filter((s) => s).join("\n");
  const earlier = items.slice(0, -1).flatMap((i): ChatMessage[] =>
    i.role === "user" || i.role === "assistant" ? [{ role: i.role, content: i.text }] : []
  );
  const params: ModelParams = {};
  if (request.max_output_tokens != null) params.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) params.temperature = request.temperature;
  if (request.top_p != null) params.top_p = request.top_p;
  return {
    input: last.text,
    system,
    earlier,
    ...(Object.keys(params).length ? { params } : {}),
    meta: {
      api: "responses",
      created_at: Math.floor(now / 1000),
      model,
      instructions: request.instructions ?? null,
      metadata: request.metadata ?? {},
      previous_response_id: request.previous_response_id ?? null,
      store: request.store ?? true,
      background: request.background ?? false,
      max_output_tokens: request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      top_p: request.top_p ?? null,
      items,
    },
  };
}

/** Whether a message's stored meta is a Responses API request's. */
export function isResponseMeta(meta: unknown): meta is ResponseMeta {
  return typeof meta === "object" && meta !== null &&
    (meta as { api?: unknown }).api === "responses";
}

function _b64url(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** `resp_<base64url session id>_<seq>`: the id routes to its session without a lookup. */
export function responseId(session: string, seq: number): string {
  return `resp_${_b64url(session)}_${seq}`;
}

/** The session id and seq of a response id, or null when it is not one. */
export function parseResponseId(id: string): { session: string; seq: number } | null {
  const match = /^resp_([A-Za-z0-9_-]{1,172})_([1-9][0-9]{0,15})$/.exec(id);
  if (!match) return null;
  let session: string;
  try {
    session = atob(match[1].replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  return SESSION_ID.test(session) ? { session, seq: Number(match[2]) } : null;
}

/** The id of a response's output message. */
export function outputMessageId(responseId: string): string {
  return `msg_${responseId.slice("resp_".length)}`;
}

/** A response's status, from its run's state. */
export type ResponseStatus = "queued" | "in_progress" | "completed" | "failed" | "cancelled";

/** The response status of a run state. */
export function responseStatus(state: RunState): ResponseStatus {
  return state.status === "running" ? "in_progress" : state.status;
}

/** The output message item, `text` so far. */
export function outputMessage(id: string, text: string, status: "in_progress" | "completed") {
  return {
    type: "message" as const,
    id: outputMessageId(id),
    status,
    role: "assistant" as const,
    content: status === "completed" ? [_textPart(text)] : [],
  };
}

function _textPart(text: string) {
  return { type: "output_text" as const, text, annotations: [] as never[] };
}

/** What a response object is built from: its id and request fields, and where its run stands. */
export interface ResponseState {
  id: string;
  meta: ResponseMeta;
  status: ResponseStatus;
  output?: string;
  usage?: TurnUsage;
  error?: { message: string; type: string };
}

/** The `response` object, as `client.responses.create/retrieve` parse it. */
export function responseObject(state: ResponseState) {
  const { meta } = state;
  const usage = state.usage;
  return {
    id: state.id,
    object: "response" as const,
    created_at: meta.created_at,
    status: state.status,
    background: meta.background,
    error: state.error ? { code: state.error.type, message: state.error.message } : null,
    incomplete_details: null,
    instructions: meta.instructions,
    max_output_tokens: meta.max_output_tokens,
    metadata: meta.metadata,
    model: meta.model,
    output: state.status === "completed"
      ? [outputMessage(state.id, state.output ?? "", "completed")]
      : [],
    parallel_tool_calls: false,
    previous_response_id: meta.previous_response_id,
    store: meta.store,
    temperature: meta.temperature,
    text: { format: { type: "text" as const } },
    tool_choice: "auto" as const,
    tools: [],
    top_p: meta.top_p,
    truncation: "disabled" as const,
    usage: state.status === "completed" && usage
      ? {
        input_tokens: usage.prompt_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
      }
      : null,
  };
}

/** The `input_items` list of a response. */
export function inputItemsList(id: string, items: InputItem[]) {
  const data = items.map((item, i) => ({
    type: "message" as const,
    id: `${outputMessageId(id)}_in${i}`,
    status: "completed" as const,
    role: item.role,
    content: [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.text }],
  }));
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: false,
  };
}

/**
 * Maps a run's events onto the Responses stream: `response.created`, `response.in_progress`, the
 * output item and content part, one `response.output_text.delta` per model delta, then the done
 * events and `response.completed` (or `response.failed`). Tool events never reach the stream.
 */
export function responseStreamFrames(
  id: string,
  meta: ResponseMeta,
): (event: RunEvent) => SseEvent[] {
  let sequence = 0;
  let created = false;
  let started = false;
  const frame = (type: string, data: Record<string, unknown>): SseEvent => ({
    event: type,
    data: { type, sequence_number: sequence++, ...data },
  });
  const at = { output_index: 0, item_id: outputMessageId(id) };
  const create = (): SseEvent[] => {
    if (created) return [];
    created = true;
    return [
      frame("response.created", { response: responseObject({ id, meta, status: "queued" }) }),
    ];
  };
  const start = (): SseEvent[] => {
    if (started) return [];
    started = true;
    return [
      ...create(),
      frame("response.in_progress", {
        response: responseObject({ id, meta, status: "in_progress" }),
      }),
      frame("response.output_item.added", {
        output_index: 0,
        item: outputMessage(id, "", "in_progress"),
      }),
      frame("response.content_part.added", { ...at, content_index: 0, part: _textPart("") }),
    ];
  };
  return (event) => {
    switch (event.type) {
      case "run.queued":
        return create();
      case "run.started":
        return start();
      case "message.delta":
        return [
          ...start(),
          frame("response.output_text.delta", {
            ...at,
            content_index: 0,
            delta: String(event.data.delta ?? ""),
            logprobs: [],
          }),
        ];
      case "run.completed": {
        const text = String(event.data.output ?? "");
        const usage = _usage(event.data.usage);
        const done = responseObject({ id, meta, status: "completed", output: text, usage });
        return [
          ...start(),
          frame("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] }),
          frame("response.content_part.done", { ...at, content_index: 0, part: _textPart(text) }),
          frame("response.output_item.done", {
            output_index: 0,
            item: outputMessage(id, text, "completed"),
          }),
          frame("response.completed", { response: done }),
        ];
      }
      case "run.failed":
      case "run.cancelled": {
        const cancelled = event.type === "run.cancelled";
        const error = cancelled
          ? { message: "the response was cancelled", type: "cancelled" }
          : _error(event.data.error);
        const status = cancelled ? "cancelled" : "failed";
        return [
          ...create(),
          frame("response.failed", { response: responseObject({ id, meta, status, error }) }),
        ];
      }
      default:
        return [];
    }
  };
}

function _error(value: unknown): { message: string; type: string } {
  const error = value as { message?: unknown; type?: unknown } | undefined;
  return {
    message: typeof error?.message === "string" ? error.message : "the turn failed",
    type: typeof error?.type === "string" ? error.type : "turn_error",
  };
}

function _usage(value: unknown): TurnUsage {
  const usage = value as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) ? n : 0);
  return {
    prompt_tokens: count(usage?.prompt_tokens),
    completion_tokens: count(usage?.completion_tokens),
  };
}

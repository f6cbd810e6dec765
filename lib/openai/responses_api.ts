// OpenAI Responses API requests: the request schema, its input items and the turn they make (the response side: response_object.ts); runtime-neutral.
import * as z from "zod";
import { jsonSchemaObject } from "../runtime/mod.ts";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type { ChatMessage, ModelParams } from "../agent/mod.ts";
import type { MediaPart } from "../media/mod.ts";
import { withImageParts } from "./image_parts.ts";
import { responseMediaParts } from "./media_parts.ts";

/**
 * A `POST /v1/responses` body; fields baton does not use (model, tools, user, …) are accepted and
 * ignored. Built on the first parse (`z.lazy`): a start-up builds none of its parts.
 */
export const responseRequest = z.lazy(_responseRequest);

/** Builds `responseRequest` (its parts are private to it). */
function _responseRequest() {
  const _textPart = z.object({
    type: z.enum(["input_text", "output_text"]),
    text: z.string().max(1_000_000),
  }).loose();

  /** An image: `image_url` a data URL or an https URL (a `file_id` is refused when checked). */
  const _imagePart = z.object({
    type: z.literal("input_image"),
    image_url: z.string().nullable().optional(),
    file_id: z.string().max(256).nullable().optional(),
    detail: z.string().max(16).nullable().optional(),
  }).loose();

  /** A file: `file_data` a data URL (or bare base64) with its `filename`; an id or URL is refused when checked. */
  const _filePart = z.object({
    type: z.literal("input_file"),
    file_data: z.string().nullable().optional(),
    filename: z.string().max(256).nullable().optional(),
    file_id: z.string().max(256).nullable().optional(),
    file_url: z.string().max(2048).nullable().optional(),
  }).loose();

  const _part = z.union([_textPart, _imagePart, _filePart]);

  const _messageItem = z.object({
    type: z.literal("message").optional(),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.union([z.string(), z.array(_part).max(1_000)]),
  }).loose();

  const _callId = z.string().min(1).max(256);

  /** A function call the model made, echoed back by a client that keeps its own history. */
  const _functionCallItem = z.object({
    type: z.literal("function_call"),
    call_id: _callId,
    name: z.string().max(64),
    arguments: z.string().max(1_000_000),
  }).loose();

  /** The client's answer to one of its tools' calls. */
  const _functionCallOutputItem = z.object({
    type: z.literal("function_call_output"),
    call_id: _callId,
    output: z.string().max(1_000_000),
  }).loose();

  const _item = z.union([_messageItem, _functionCallItem, _functionCallOutputItem]);

  /** A client's function tool, in the Responses shape (flat, not nested under `function`). */
  const _functionTool = z.object({
    type: z.literal("function"),
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 characters of [A-Za-z0-9_-]"),
    description: z.string().max(10_000).nullable().optional(),
    parameters: jsonSchemaObject.nullable().optional(),
    strict: z.boolean().nullable().optional(),
  });

  return z.looseObject({
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
    tools: z.array(_functionTool).max(128).nullable().optional(),
    tool_choice: z.union([
      z.enum(["none", "auto", "required"]),
      z.object({ type: z.literal("function"), name: z.string().max(64) }),
    ]).nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    // Ignored (the reply is text), but a schema sent here is held to the schema depth limit too.
    text: z.looseObject({
      format: z.looseObject({ schema: jsonSchemaObject.optional() }).nullable().optional(),
    }).nullable().optional(),
  });
}

/** A parsed `POST /v1/responses` body. */
export type ResponseRequest = z.infer<typeof responseRequest>;

/** One input item as kept with the response (for `input_items`). */
export type InputItem =
  | { role: "user" | "assistant" | "system" | "developer"; text: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

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
  /** The client's function tools, as sent. */
  tools: NonNullable<ResponseRequest["tools"]>;
  items: InputItem[];
}

/** What a turn needs from a request: the input, the system text, earlier messages, the echoed fields. */
export interface ResponseTurn {
  /** The last user message's text ("" when the turn continues on function call outputs). */
  input: string;
  /** The client's answers to its tools' calls, when the input ends with them: the turn's input. */
  toolResults: ChatMessage[];
  /** The client's function tools, offered beside baton's. */
  clientTools: ChatCompletionTool[];
  system: string;
  /**
   * Input before the last user message or the outputs: messages, and calls as assistant messages.
   * A user message's images are in its `media` (lib/media/ `MediaPart`s, stored by the route).
   */
  earlier: ChatMessage[];
  /** The last user message's `input_image` and `input_file` parts, unchecked: the route checks and stores them. */
  media: MediaPart[];
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
    : request.input.map((item): InputItem =>
      item.type === "function_call"
        ? {
          type: "function_call",
          call_id: item.call_id,
          name: item.name,
          arguments: item.arguments,
        }
        : item.type === "function_call_output"
        ? { type: "function_call_output", call_id: item.call_id, output: item.output }
        : {
          role: item.role,
          text: typeof item.content === "string"
            ? item.content
            : item.content.map((p) => ("text" in p ? p.text : "")).join(""),
        }
    );
  let end = items.length;
  const isOutput = (item: InputItem) => "type" in item && item.type === "function_call_output";
  while (end > 0 && isOutput(items[end - 1])) end--;
  const last = items[end - 1];
  const continuesOnOutputs = end < items.length;
  if (!continuesOnOutputs && (!last || "type" in last || last.role !== "user")) {
    return "input: the last item must be a user message or function_call_output items";
  }
  const system = [
    request.instructions ?? "",
    ...items.flatMap((i) =>
      "role" in i && (i.role === "system" || i.role === "developer") ? [i.text] : []
    ),
  ].filter((s) => s).join("\n");
  // Image parts by item: kept out of `items` (stored with the message), so no bytes go there.
  const images = typeof request.input === "string"
    ? []
    : request.input.map((item, i) => "content" in item ? responseMediaParts(item.content, i) : []);
  const earlier = _history(items.slice(0, continuesOnOutputs ? end : end - 1), images);
  const toolResults = items.slice(end).flatMap((i): ChatMessage[] =>
    "type" in i && i.type === "function_call_output"
      ? [{ role: "tool", tool_call_id: i.call_id, content: i.output }]
      : []
  );
  const params: ModelParams = {};
  if (request.max_output_tokens != null) params.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) params.temperature = request.temperature;
  if (request.top_p != null) params.top_p = request.top_p;
  if (request.parallel_tool_calls != null) params.parallel_tool_calls = request.parallel_tool_calls;
  const choice = request.tool_choice;
  if (choice != null) {
    params.tool_choice = typeof choice === "string"
      ? choice
      : { type: "function", function: { name: choice.name } };
  }
  const tools = request.tools ?? [];
  return {
    input: continuesOnOutputs ? "" : (last as { text: string }).text,
    toolResults,
    clientTools: tools.map((t) => ({
      type: "function" as const,
      function: {
        name: t.name,
        ...(t.description != null ? { description: t.description } : {}),
        ...(t.parameters != null ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    })),
    system,
    earlier,
    media: continuesOnOutputs ? [] : images[end - 1] ?? [],
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
      tools,
      items,
    },
  };
}

/**
 * Input items as history: messages as text (a user message's `images` as its `media` parts), a
 * run of function calls as one assistant message.
 */
function _history(items: InputItem[], images: MediaPart[][]): ChatMessage[] {
  const history: ChatMessage[] = [];
  for (const [i, item] of items.entries()) {
    if ("role" in item) {
      if (item.role === "user") {
        history.push(withImageParts({ role: "user", content: item.text }, images[i] ?? []));
      } else if (item.role === "assistant") {
        history.push({ role: item.role, content: item.text });
      }
    } else if (item.type === "function_call_output") {
      history.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
    } else {
      const call = {
        id: item.call_id,
        type: "function" as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const prev = history.at(-1);
      if (prev?.role === "assistant" && prev.tool_calls) prev.tool_calls.push(call);
      else history.push({ role: "assistant", content: null, tool_calls: [call] });
    }
  }
  return history;
}

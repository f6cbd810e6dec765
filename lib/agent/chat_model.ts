// Chat model providers: OpenAI-compatible Chat Completions (openai package) and the offline echo model; any runtime with fetch.
import type OpenAI from "openai";
import { isContextOverflow } from "./context_overflow.ts";
import { eagerChatStream } from "./_eager_stream.ts";
import { replyImages } from "./reply_images.ts";
import type { ToolFile } from "./tool_files.ts";
import type { ChatMessage } from "./chat_message.ts";
import type {
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";

export type { ChatMessage } from "./chat_message.ts";

/** A tool call the model asked for. */
export type ToolCall = ChatCompletionMessageToolCall;

/**
 * Sampling and output parameters a caller may set, passed to the provider as given (the echo
 * model ignores them). `max_tokens` and `max_completion_tokens` bound each model call of a turn.
 */
export interface ModelParams {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  reasoning_effort?: "minimal" | "low" | "medium" | "high";
  /** How the model may use tools: as given by the caller (about its own and baton's tools). */
  tool_choice?:
    | "none"
    | "auto"
    | "required"
    | { type: "function"; function: { name: string } };
  parallel_tool_calls?: boolean;
  response_format?:
    | { type: "text" }
    | { type: "json_object" }
    | {
      type: "json_schema";
      json_schema: {
        name: string;
        description?: string;
        schema?: Record<string, unknown>;
        strict?: boolean | null;
      };
    };
}

/** One request to the model. */
export interface ModelRequest {
  messages: ChatMessage[];
  tools: ChatCompletionTool[];
  /** The caller's parameters for this turn. */
  params?: ModelParams;
  signal?: AbortSignal;
  /** When given, the reply is streamed and each text delta is passed here as it arrives. */
  onDelta?: (delta: string) => void;
  /**
   * The model name for this call (the turn's chosen model, lib/agent/turn_model.ts); absent: the
   * provider's configured one. A fallback chain sends it to its first model only.
   */
  model?: string;
  /** Told when a fallback chain gives up on one model and asks the next (model_fallbacks.ts). */
  onFallback?: (attempt: FallbackAttempt) => void;
}

/** One model of a fallback chain that failed, and the next one asked instead; never a key or URL. */
export interface FallbackAttempt {
  /** The model that failed (after its own retries). */
  from: string;
  /** The model asked next. */
  to: string;
  /** The provider's HTTP status; absent for a timeout or an unreachable provider. */
  status?: number;
  /** What failed, as `ModelError` says it. */
  error: string;
  /** How long the failed model took, its own retries included. */
  duration_ms: number;
}

/** The model's answer to one request. */
export interface ModelReply {
  content: string;
  toolCalls: ToolCall[];
  /** The provider stopped at its output limit (`finish_reason: "length"`): the text is cut short. */
  truncated?: boolean;
  /**
   * Images the reply carries (`image_url` content parts, or `message.images`: reply_images.ts),
   * not yet stored; `content` is the text alone. Absent when none.
   */
  images?: ToolFile[];
  /** Token counts as the provider reported them; `cached_tokens` (part of the prompt's) where it says. */
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
}

/** A chat model: one call per agent step. */
export interface ChatModel {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelReply>;
}

/**
 * A model call that failed after the provider's retries; the message never contains secrets.
 * `transient`: the provider was overloaded or unreachable (408, 429, 5xx, a timeout, no
 * connection), so another model may answer; a client error (400, 401, 404, …) is not.
 */
export class ModelError extends Error {
  override name = "ModelError";
  /**
   * `contextOverflow`: the provider said the prompt is longer than the model's context
   * (context_overflow.ts): the session compacts and asks once more (lib/session/compactor.ts).
   */
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly transient: boolean = status !== undefined &&
      (status === 408 || status === 429 || status >= 500),
    readonly contextOverflow = false,
  ) {
    super(message);
  }
}

/** The built-in offline model: answers with the text of the last user message. */
export function echoModel(): ChatModel {
  return {
    name: "echo",
    complete({ messages, onDelta }) {
      const last = [...messages].reverse().find((m) => m.role === "user");
      const content = last ? messageText(last) : "";
      onDelta?.(content);
      return Promise.resolve({
        content,
        toolCalls: [],
        usage: { prompt_tokens: 0, completion_tokens: 0 },
      });
    },
  };
}

/** Settings of an OpenAI-compatible provider. */
export interface OpenAIModelOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Retries on 408/409/429/5xx and connection errors, honouring Retry-After. */
  maxRetries: number;
  /** Per-attempt timeout. */
  timeoutMs: number;
}

/** The `openai` package, loaded on the first model call: a start-up only pre-parses its 447 KB. */
let _openaiPackage: Promise<typeof import("openai")> | undefined;

/** A model behind an OpenAI-compatible Chat Completions endpoint; its client is made on the first call. */
export function openAIChatModel(options: OpenAIModelOptions): ChatModel {
  let client: OpenAI | undefined;
  return {
    name: options.model,
    async complete({ messages, tools, params: callerParams, signal, onDelta, model }) {
      const { default: OpenAIClient } = await (_openaiPackage ??= import("openai"));
      client ??= new OpenAIClient({
        baseURL: options.baseURL,
        apiKey: options.apiKey || "unset",
        maxRetries: options.maxRetries,
        timeout: options.timeoutMs,
      });
      const params = {
        ...callerParams,
        model: model || options.model,
        messages,
        ...(tools.length ? { tools } : {}),
      };
      try {
        if (onDelta) {
          // Without include_usage a provider's stream carries no token counts. Sent at once, not
          // from the package's timer (_eager_stream.ts).
          const stream = await eagerChatStream(client, {
            ...params,
            stream_options: { include_usage: true },
          }, signal);
          stream.on("content", (delta) => onDelta(delta));
          // The package keeps only the last chunk's `delta.images`: each chunk's are gathered here.
          const images: unknown[] = [];
          stream.on("chunk", (chunk) => {
            const delta = chunk.choices[0]?.delta as { images?: unknown } | undefined;
            if (Array.isArray(delta?.images)) images.push(...delta.images);
          });
          return _toReply(await stream.finalChatCompletion(), images);
        }
        return _toReply(await client.chat.completions.create(params, { signal }));
      } catch (error) {
        throw _toModelError(error, OpenAIClient);
      }
    },
  };
}

/** The plain text of a message's content (text parts joined). */
export function messageText(message: { content?: unknown }): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
      .join("");
  }
  return "";
}

function _toReply(
  completion: OpenAI.Chat.Completions.ChatCompletion,
  streamedImages?: unknown[],
): ModelReply {
  const message = completion.choices[0]?.message;
  if (!message) throw new ModelError("the model returned no choices", undefined);
  // A provider may answer with content parts (text and images) or OpenRouter's `images`.
  const { text, images } = replyImages(message, streamedImages);
  return {
    content: text,
    ...(images.length ? { images } : {}),
    toolCalls: (message.tool_calls ?? []).filter((c) => c.type === "function"),
    ...(completion.choices[0]?.finish_reason === "length" ? { truncated: true } : {}),
    usage: {
      prompt_tokens: completion.usage?.prompt_tokens ?? 0,
      completion_tokens: completion.usage?.completion_tokens ?? 0,
      ...(completion.usage?.prompt_tokens_details?.cached_tokens
        ? { cached_tokens: completion.usage.prompt_tokens_details.cached_tokens }
        : {}),
    },
  };
}

/** `error` as a `ModelError` when the package's client (`OpenAI`, loaded by now) threw it. */
function _toModelError(error: unknown, OpenAI: typeof import("openai").default): Error {
  if (error instanceof ModelError) return error;
  if (error instanceof OpenAI.APIUserAbortError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError("the model provider timed out", undefined, true);
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ModelError("could not reach the model provider", undefined, true);
  }
  if (error instanceof OpenAI.APIError) {
    // The provider's own words are matched here and then dropped: they never reach a user.
    const body = (error.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown };
    const said = {
      code: error.code ?? body.code,
      type: error.type ?? body.type,
      message: body.message ?? error.message,
    };
    const overflow = isContextOverflow(error.status, said);
    const message = overflow
      ? `the conversation is too long for the model (${error.status})`
      : `the model provider answered ${error.status}`;
    return new ModelError(message, error.status, undefined, overflow);
  }
  return error instanceof Error ? error : new Error(String(error));
}

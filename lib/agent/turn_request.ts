// The agent turn's request and result types (what runTurn takes and gives back, a paused turn's resumption, its events), in a file of their own so the turn and its tool-call step share them; any runtime.
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type {
  ChatMessage,
  ChatModel,
  FallbackAttempt,
  ModelParams,
  ToolCall,
} from "./chat_model.ts";
import type { Tool, ToolRegistry } from "./tools.ts";
import type { HookOptions } from "./turn_hooks.ts";
import type { ToolFileStore } from "./tool_files.ts";

/** What one turn needs; `hooks.toolCall` is asked before each baton tool call runs (`HookOptions`). */
export interface TurnRequest extends HookOptions {
  model: ChatModel;
  tools: ToolRegistry;
  /** System messages sent first, in order (deployment prompt, then the caller's). */
  system: string[];
  /** Earlier conversation, oldest first, already bounded. */
  history: ChatMessage[];
  /** The user's message; absent when the turn continues on `toolResults`. */
  input?: string;
  /**
   * The references kept with the user's message (its `media` field, lib/media/): stored with it in
   * the turn's messages; `view` makes them what the model sees.
   */
  inputMedia?: readonly unknown[];
  /**
   * What the model is sent, made from the messages the turn keeps (lib/media/ `mediaModelView`:
   * kept references become image parts or text); absent: the messages as they are.
   */
  view?: (messages: ChatMessage[]) => Promise<ChatMessage[]>;
  /** The client's answers to its tools' calls that ended the previous turn: this turn's input. */
  toolResults?: ChatMessage[];
  /** The client's own function tools: offered beside baton's; a call to one ends the turn. */
  clientTools?: ChatCompletionTool[];
  /** The caller's model parameters, sent with every model call of the turn. */
  params?: ModelParams;
  maxSteps: number;
  /** `TOOL_RESULT_MAX_CHARS`: a longer result of a baton tool is cut with a note (tool_result_cut.ts). */
  toolResultMaxChars?: number;
  /**
   * Stores the files a baton tool returns (`{ files: [...] }`, tool_files.ts): kept on its tool
   * message and sent with the reply, the model told only that they were attached. Absent: such
   * files are dropped with a note to the model. The final reply's own images go the same way
   * (reply_images.ts), kept on the assistant message.
   */
  toolFiles?: ToolFileStore;
  /**
   * The turn's token ceiling (`TURN_MAX_TOKENS`): no model call starts once the turn's tokens so
   * far plus the last call's prompt (what the next one sends at least) leave nothing of it; the
   * turn ends with `TOKEN_CAP_REPLY`. Each call's output is bound to what is left
   * (`max_completion_tokens`, or the caller's `max_tokens`: token_ceiling.ts). Absent: no ceiling.
   */
  maxTokens?: number;
  signal: AbortSignal;
  onDelta?: (delta: string) => void;
  /** Updated as the turn goes: steps started and messages so far (kept if the turn is interrupted). */
  progress?: { step: number; messages: ChatMessage[] };
  /** Told when each tool call starts and ends (exactly once each, same call id). */
  onTool?: (event: ToolEvent) => void;
  /** Told when each model call ends, answered or failed, and when a fallback model is asked. */
  onModel?: (event: ModelEvent) => void;
  /** The model name every call of this turn asks for (lib/agent/turn_model.ts); absent: the model's own. */
  modelName?: string;
  /** Whether a call of a baton tool must wait for the user's approval; absent: none does. */
  asks?: (tool: Tool, args: Record<string, unknown>) => boolean;
  /**
   * What an asking call does: pause the turn (default), or `refuse` — the model is told the call
   * needs an approval this turn cannot ask for (a delegated child turn, which cannot pause).
   */
  onAsk?: "pause" | "refuse";
  /** Continues a turn that paused for approval, exactly where it stopped, instead of starting on `input`. */
  resume?: TurnResume;
  /**
   * Asked before each model call: user messages that arrived while the turn ran (a steer), added
   * to the turn's messages so that this call sees them. The host has recorded them as taken.
   */
  steers?: () => ChatMessage[];
}

/** A tool call waiting for the user's approval. */
export interface PendingCall {
  call_id: string;
  tool: string;
  /** The call's arguments as the model wrote them (JSON text). */
  arguments: string;
}

/** Where a paused turn resumes, and what the user answered. */
export interface TurnResume {
  /** The turn's messages when it paused: the last is the assistant message whose calls wait. */
  messages: ChatMessage[];
  /** Steps (model calls) the turn had made. */
  step: number;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** Calls the user did not approve, by call id, with what the model is told; every other call runs. */
  denied: Record<string, string>;
  /**
   * Results of calls an earlier resumption of this turn ran already (or started and may have
   * run, with what the model is told), by call id: given to the model as they are, not run again.
   */
  results?: Record<string, string>;
  /**
   * Told before each call of the paused step runs (`result` null) and after (its result), so
   * the host can store them and a turn that dies here never runs an approved call twice.
   */
  record?: (callId: string, result: string | null) => void;
}

/** A tool call's lifecycle event. */
export type ToolEvent =
  | { type: "tool.started"; tool: string; call_id: string }
  | { type: "tool.completed"; tool: string; call_id: string; duration_ms: number; error?: string };

/** A model call's end: its step, how long it took, and its tokens and tool calls or its error. */
export type ModelEvent =
  | {
    type: "model.completed";
    step: number;
    /** The model that answered (a fallback's where the chain moved): what `MODEL_PRICES` prices. */
    model: string;
    duration_ms: number;
    prompt_tokens: number;
    completion_tokens: number;
    /** Prompt tokens the provider served from its cache, where it says. */
    cached_tokens?: number;
    tool_calls: number;
  }
  | { type: "model.failed"; step: number; duration_ms: number; error: string }
  /** A fallback chain's move (model_fallbacks.ts): `from` failed, `to` is asked next in the same step. */
  | { type: "model.fallback"; step: number } & FallbackAttempt;

/** What one turn produced. */
export interface TurnResult {
  reply: string;
  /** The turn's new messages, to append to the transcript: user, then assistant and tool messages. */
  messages: ChatMessage[];
  steps: number;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** The calls of client tools that ended the turn: the client runs them and answers. */
  toolCalls?: ToolCall[];
  /** The reply stopped at the model's output limit. */
  truncated?: boolean;
  /**
   * The turn paused before running its last step's tools: these calls wait for approval, and
   * `messages` are the turn's messages so far (pass them back in `resume`).
   */
  paused?: PendingCall[];
}

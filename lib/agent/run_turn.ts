// The agent turn: a tool-calling loop over a ChatModel, capped in steps; any runtime with node:async_hooks (its frame: log fields, its tools' context).
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type {
  ChatMessage,
  ChatModel,
  FallbackAttempt,
  ModelParams,
  ToolCall,
} from "./chat_model.ts";
import type { Tool, ToolRegistry, ToolRunOptions } from "./tools.ts";
import {
  currentContext,
  errorText,
  frameLogFields,
  type SessionContext,
  withLogFields,
} from "../runtime/mod.ts";
import { callHook, hookContext, type HookOptions } from "./turn_hooks.ts";
import { cutToolResult } from "./tool_result_cut.ts";
import { clampToCeiling } from "./token_ceiling.ts";
import { replyWithImages } from "./reply_images.ts";
import {
  type AttachedFile,
  storeToolFiles,
  type ToolFileStore,
  toolResultFiles,
  withoutToolFiles,
} from "./tool_files.ts";

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

/** Text of the reply when the step cap ends a turn that still wanted tools. */
export const STEP_CAP_REPLY =
  "I stopped after reaching this turn's step limit without a final answer.";

/** Text of the reply when the turn's token ceiling (`maxTokens`) ends a turn that still wanted tools. */
export const TOKEN_CAP_REPLY =
  "I stopped because this turn reached its token limit (TURN_MAX_TOKENS) without a final answer.";

/** What the model is told for an asking call in a turn that cannot ask (`onAsk: "refuse"`). */
export const REFUSED_ASK =
  "this tool needs the user's approval, which cannot be asked for here; the call was not run";

/** Runs one agent turn: model calls and tool calls until the model answers with text or the cap. */
export async function runTurn(request: TurnRequest): Promise<TurnResult> {
  const { signal, resume } = request;
  const added: ChatMessage[] = request.progress?.messages ?? [];
  const clientNames = new Set((request.clientTools ?? []).map(_toolName));
  const usage = { ...(resume?.usage ?? { prompt_tokens: 0, completion_tokens: 0 }) };
  let first = 1;
  if (resume) {
    added.push(...resume.messages);
    first = resume.step + 1;
    const last = resume.messages.at(-1);
    const calls = last?.role === "assistant" ? last.tool_calls ?? [] : [];
    const clientCalls = await _runCalls(request, added, calls, clientNames, resume.denied, resume);
    if (clientCalls.length) {
      const reply = typeof last?.content === "string" ? last.content : "";
      return { reply, messages: added, steps: resume.step, usage, toolCalls: clientCalls };
    }
  } else if (request.toolResults?.length) {
    added.push(...request.toolResults);
  } else {
    // Client calls left unanswered by a new question: their results are owed to the model.
    const media = request.inputMedia?.length ? { media: [...request.inputMedia] } : {};
    const user = { role: "user", content: request.input ?? "", ...media } as ChatMessage;
    added.push(..._unanswered(request.history), user);
  }
  const prefix: ChatMessage[] = [
    ...request.system.filter((s) => s).map((content): ChatMessage => ({ role: "system", content })),
    ...request.history,
  ];
  let lastPrompt = 0;
  for (let step = first; step <= request.maxSteps; step++) {
    signal.throwIfAborted();
    // TURN_MAX_TOKENS: no call once nothing is left, else its output bound to what is.
    const params = clampToCeiling(request.maxTokens, request.params, usage, lastPrompt);
    if (params === null) {
      added.push({ role: "assistant", content: TOKEN_CAP_REPLY });
      return { reply: TOKEN_CAP_REPLY, messages: added, steps: step - 1, usage };
    }
    if (request.progress) request.progress.step = step;
    // After the last step's tool calls, before this model call: what the user added meanwhile.
    if (request.steers) added.push(...request.steers());
    // Lines logged by the model call and the tools name their step.
    const reply = await withLogFields(
      { step },
      () => _complete({ ...request, params }, prefix, added, step),
    );
    usage.prompt_tokens += reply.usage.prompt_tokens;
    usage.completion_tokens += reply.usage.completion_tokens;
    lastPrompt = reply.usage.prompt_tokens;
    if (reply.toolCalls.length === 0) {
      // The reply's own images are stored like a tool's files and kept on its message.
      const { content, files } = await replyWithImages(
        reply.content,
        reply.images,
        request.toolFiles,
        signal,
      );
      added.push({ role: "assistant", content, ...(files.length ? { files } : {}) } as ChatMessage);
      const truncated = reply.truncated ? { truncated: true } : {};
      return { reply: content, messages: added, steps: step, usage, ...truncated };
    }
    added.push({ role: "assistant", content: reply.content || null, tool_calls: reply.toolCalls });
    // Nothing of this step runs before every asking call is answered: the turn resumes here.
    const paused = _asking(request, reply.toolCalls);
    const refuse = request.onAsk === "refuse";
    if (paused.length && !refuse) {
      return { reply: reply.content, messages: added, steps: step, usage, paused };
    }
    const refused = Object.fromEntries(paused.map((call) => [call.call_id, REFUSED_ASK]));
    const clientCalls = await withLogFields(
      { step },
      () => _runCalls(request, added, reply.toolCalls, clientNames, refused),
    );
    if (clientCalls.length) {
      return { reply: reply.content, messages: added, steps: step, usage, toolCalls: clientCalls };
    }
  }
  added.push({ role: "assistant", content: STEP_CAP_REPLY });
  return { reply: STEP_CAP_REPLY, messages: added, steps: request.maxSteps, usage };
}

/** One model call of `step`, told to `onModel` once it has ended, answered or failed. */
async function _complete(
  request: TurnRequest,
  prefix: ChatMessage[],
  added: ChatMessage[],
  step: number,
): ReturnType<ChatModel["complete"]> {
  const { model, tools, signal, onModel } = request;
  const started = Date.now();
  // The model that answered: the turn's, or the last a fallback chain moved to (its price).
  let answered = request.modelName ?? model.name;
  try {
    // The tool messages' `files` are baton's own: never sent to the model.
    const messages = withoutToolFiles([...prefix, ...added]);
    const reply = await model.complete({
      messages: request.view ? await request.view(messages) : messages,
      tools: [...tools.definitions(), ...(request.clientTools ?? [])],
      ...(request.params ? { params: request.params } : {}),
      signal,
      onDelta: request.onDelta,
      ...(request.modelName ? { model: request.modelName } : {}),
      ...(onModel
        ? {
          onFallback: (attempt) => {
            answered = attempt.to;
            onModel({ type: "model.fallback", step, ...attempt });
          },
        }
        : {}),
    });
    onModel?.({
      type: "model.completed",
      step,
      model: answered,
      duration_ms: Date.now() - started,
      prompt_tokens: reply.usage.prompt_tokens,
      completion_tokens: reply.usage.completion_tokens,
      ...(reply.usage.cached_tokens ? { cached_tokens: reply.usage.cached_tokens } : {}),
      tool_calls: reply.toolCalls.length,
    });
    return reply;
  } catch (error) {
    const ms = Date.now() - started;
    // The turn's failure carries the whole error; the timeline's row stays small.
    const text = errorText(error).slice(0, 300);
    onModel?.({ type: "model.failed", step, duration_ms: ms, error: text });
    throw error;
  }
}

/**
 * Runs a step's baton tool calls in order (a denied one only gets its denial; one a resumed
 * turn ran before gets its stored result); returns the client's calls.
 */
async function _runCalls(
  request: TurnRequest,
  added: ChatMessage[],
  calls: ToolCall[],
  clientNames: Set<string>,
  denied: Record<string, string>,
  resumed?: TurnResume,
): Promise<ToolCall[]> {
  const { tools, signal } = request;
  const stored = resumed?.results ?? {};
  // The turn's context as its tools are given it: its frame is bound once, before the turn.
  const context: SessionContext = Object.freeze(currentContext());
  for (const call of calls) {
    if (clientNames.has(_callName(call))) continue; // the client runs its own
    if (Object.hasOwn(denied, call.id)) {
      const content = JSON.stringify({ error: denied[call.id] });
      added.push({ role: "tool", tool_call_id: call.id, content });
      continue;
    }
    if (Object.hasOwn(stored, call.id)) {
      added.push({ role: "tool", tool_call_id: call.id, content: stored[call.id] });
      continue;
    }
    const name = call.type === "function" ? call.function.name : call.type;
    const refusal = await _toolCallRefusal(request, call, context);
    if (refusal !== null) {
      const content = JSON.stringify({ error: refusal });
      // A resumed turn that dies after this does not ask the hook again for the same call.
      resumed?.record?.(call.id, content);
      added.push({ role: "tool", tool_call_id: call.id, content });
      continue;
    }
    resumed?.record?.(call.id, null);
    request.onTool?.({ type: "tool.started", tool: name, call_id: call.id });
    const started = Date.now();
    const ran = await _runTool(tools, call, { signal, context }, request.toolFiles);
    // Cut before anything keeps it: the model, the transcript, a resumed turn's record.
    const result = { ...ran, content: cutToolResult(ran.content, request.toolResultMaxChars) };
    resumed?.record?.(call.id, result.content);
    request.onTool?.({
      type: "tool.completed",
      tool: name,
      call_id: call.id,
      duration_ms: Date.now() - started,
      ...(result.error !== undefined ? { error: result.error } : {}),
    });
    const files = ran.files?.length ? { files: ran.files } : {};
    added.push(
      { role: "tool", tool_call_id: call.id, content: result.content, ...files } as ChatMessage,
    );
  }
  return calls.filter((call) => clientNames.has(_callName(call)));
}

/** What the model is told for a call the deployment's `toolCall` hook denied, before its reason. */
export const HOOK_DENIED = "refused by the deployment: ";

/**
 * Asks the `toolCall` hook about a call of a known baton tool with valid arguments (one that
 * cannot run fails as it would anyway): its denial as the model is told it, or null to run it.
 */
async function _toolCallRefusal(
  request: TurnRequest,
  call: ToolCall,
  context: SessionContext,
): Promise<string | null> {
  if (!request.hooks?.toolCall || call.type !== "function") return null;
  const tool = request.tools.get(call.function.name);
  const args = tool ? _parseArgs(call.function.arguments) : null;
  if (!tool || !args) return null;
  const seq = Number(frameLogFields().seq ?? 0);
  const verdict = await callHook(request, "toolCall", {
    ...hookContext(context, Number.isSafeInteger(seq) ? seq : 0),
    tool: tool.name,
    call_id: call.id,
    arguments: args,
  });
  const deny = verdict && typeof verdict === "object" ? verdict.deny : undefined;
  return typeof deny === "string" ? HOOK_DENIED + deny : null;
}

/** Whether the next model call would pass the turn's token ceiling (none: never). */
/** The calls of a step that must wait for approval (a call that cannot run never asks: it fails). */
function _asking(request: TurnRequest, calls: ToolCall[]): PendingCall[] {
  if (!request.asks) return [];
  return calls.flatMap((call) => {
    if (call.type !== "function") return [];
    const tool = request.tools.get(call.function.name);
    const args = tool ? _parseArgs(call.function.arguments) : null;
    if (!tool || !args || !request.asks!(tool, args)) return [];
    return [{ call_id: call.id, tool: tool.name, arguments: call.function.arguments || "{}" }];
  });
}

function _parseArgs(text: string): Record<string, unknown> | null {
  try {
    const args = text ? JSON.parse(text) : {};
    return args && typeof args === "object" && !Array.isArray(args) ? args : null;
  } catch {
    return null;
  }
}

function _toolName(tool: ChatCompletionTool): string {
  return tool.type === "function" ? tool.function.name : "";
}

function _callName(call: ToolCall): string {
  return call.type === "function" ? call.function.name : "";
}

/**
 * Tool results for the calls of the history's last assistant message that no tool message
 * answers (a client that asked something new instead of answering its tools): every call must
 * have a result before the model may be asked again.
 */
function _unanswered(history: ChatMessage[]): ChatMessage[] {
  const last = history.findLastIndex((m) => m.role === "assistant");
  const message = history[last];
  if (!message || message.role !== "assistant" || !message.tool_calls?.length) return [];
  const answered = new Set(
    history.slice(last + 1).flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])),
  );
  return message.tool_calls.filter((call) => !answered.has(call.id)).map((call) => ({
    role: "tool" as const,
    tool_call_id: call.id,
    content: JSON.stringify({ error: "the client did not answer this call" }),
  }));
}

async function _runTool(
  tools: ToolRegistry,
  call: ToolCall,
  options: ToolRunOptions,
  fileStore?: ToolFileStore,
): Promise<{ content: string; error?: string; files?: AttachedFile[] }> {
  const { signal } = options;
  const fail = (error: string) => ({ content: JSON.stringify({ error }), error });
  if (call.type !== "function") return fail("unsupported tool call type");
  const tool = tools.get(call.function.name);
  if (!tool) return fail(`unknown tool: ${call.function.name}`);
  let args: unknown;
  try {
    args = call.function.arguments ? JSON.parse(call.function.arguments) : {};
  } catch {
    return fail("tool arguments are not valid JSON");
  }
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    return fail("tool arguments must be a JSON object");
  }
  try {
    const result = await tool.run(args as Record<string, unknown>, options);
    const withFiles = toolResultFiles(result);
    if (withFiles) return await storeToolFiles(withFiles, fileStore, signal);
    return { content: typeof result === "string" ? result : JSON.stringify(result ?? null) };
  } catch (error) {
    signal.throwIfAborted();
    return fail(error instanceof Error ? error.message : String(error));
  }
}

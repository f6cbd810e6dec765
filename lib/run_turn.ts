// The agent turn: a tool-calling loop over a ChatModel, capped in steps; any runtime.
import type { ChatMessage, ChatModel, ModelParams, ToolCall } from "./chat_model.ts";
import type { ToolRegistry } from "./tools.ts";

/** What one turn needs. */
export interface TurnRequest {
  model: ChatModel;
  tools: ToolRegistry;
  /** System messages sent first, in order (deployment prompt, then the caller's). */
  system: string[];
  /** Earlier conversation, oldest first, already bounded. */
  history: ChatMessage[];
  input: string;
  /** The caller's model parameters, sent with every model call of the turn. */
  params?: ModelParams;
  maxSteps: number;
  signal: AbortSignal;
  onDelta?: (delta: string) => void;
  /** Updated as the turn goes: steps started and messages so far (kept if the turn is interrupted). */
  progress?: { step: number; messages: ChatMessage[] };
  /** Told when each tool call starts and ends (exactly once each, same call id). */
  onTool?: (event: ToolEvent) => void;
}

/** A tool call's lifecycle event. */
export type ToolEvent =
  | { type: "tool.started"; tool: string; call_id: string }
  | { type: "tool.completed"; tool: string; call_id: string; duration_ms: number; error?: string };

/** What one turn produced. */
export interface TurnResult {
  reply: string;
  /** The turn's new messages, to append to the transcript: user, then assistant and tool messages. */
  messages: ChatMessage[];
  steps: number;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/** Text of the reply when the step cap ends a turn that still wanted tools. */
export const STEP_CAP_REPLY =
  "I stopped after reaching this turn's step limit without a final answer.";

/** Runs one agent turn: model calls and tool calls until the model answers with text or the cap. */
export async function runTurn(request: TurnRequest): Promise<TurnResult> {
  const { model, tools, signal } = request;
  const user: ChatMessage = { role: "user", content: request.input };
  const added: ChatMessage[] = request.progress?.messages ?? [];
  added.push(user);
  const prefix: ChatMessage[] = [
    ...request.system.filter((s) => s).map((content): ChatMessage => ({ role: "system", content })),
    ...request.history,
  ];
  const usage = { prompt_tokens: 0, completion_tokens: 0 };
  for (let step = 1; step <= request.maxSteps; step++) {
    signal.throwIfAborted();
    if (request.progress) request.progress.step = step;
    const reply = await model.complete({
      messages: [...prefix, ...added],
      tools: tools.definitions(),
      ...(request.params ? { params: request.params } : {}),
      signal,
      onDelta: request.onDelta,
    });
    usage.prompt_tokens += reply.usage.prompt_tokens;
    usage.completion_tokens += reply.usage.completion_tokens;
    if (reply.toolCalls.length === 0) {
      added.push({ role: "assistant", content: reply.content });
      return { reply: reply.content, messages: added, steps: step, usage };
    }
    added.push({ role: "assistant", content: reply.content || null, tool_calls: reply.toolCalls });
    for (const call of reply.toolCalls) {
      const name = call.type === "function" ? call.function.name : call.type;
      request.onTool?.({ type: "tool.started", tool: name, call_id: call.id });
      const started = Date.now();
      const result = await _runTool(tools, call, signal);
      request.onTool?.({
        type: "tool.completed",
        tool: name,
        call_id: call.id,
        duration_ms: Date.now() - started,
        ...(result.error !== undefined ? { error: result.error } : {}),
      });
      added.push({ role: "tool", tool_call_id: call.id, content: result.content });
    }
  }
  added.push({ role: "assistant", content: STEP_CAP_REPLY });
  return { reply: STEP_CAP_REPLY, messages: added, steps: request.maxSteps, usage };
}

async function _runTool(
  tools: ToolRegistry,
  call: ToolCall,
  signal: AbortSignal,
): Promise<{ content: string; error?: string }> {
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
    const result = await tool.run(args as Record<string, unknown>, { signal });
    return { content: typeof result === "string" ? result : JSON.stringify(result ?? null) };
  } catch (error) {
    signal.throwIfAborted();
    return fail(error instanceof Error ? error.message : String(error));
  }
}

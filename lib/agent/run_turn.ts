// The agent turn: a tool-calling loop over a ChatModel, capped in steps; any runtime with node:async_hooks (its frame: log fields, its tools' context).
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type { ChatMessage, ChatModel } from "./chat_model.ts";
import { errorText, withLogFields } from "../runtime/mod.ts";
import { clampToCeiling } from "./token_ceiling.ts";
import { replyWithImages } from "./reply_images.ts";
import { withoutToolFiles } from "./tool_files.ts";
import { askingCalls, runToolCalls } from "./run_tool_calls.ts";

/** Kept here too: callers that knew it from the turn still find it. */
export { HOOK_DENIED } from "./run_tool_calls.ts";
export type {
  ModelEvent,
  PendingCall,
  ToolEvent,
  TurnRequest,
  TurnResult,
  TurnResume,
} from "./turn_request.ts";
import type { TurnRequest, TurnResult } from "./turn_request.ts";

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
    const clientCalls = await runToolCalls(
      request,
      added,
      calls,
      clientNames,
      resume.denied,
      resume,
    );
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
    const paused = askingCalls(request, reply.toolCalls);
    const refuse = request.onAsk === "refuse";
    if (paused.length && !refuse) {
      return { reply: reply.content, messages: added, steps: step, usage, paused };
    }
    const refused = Object.fromEntries(paused.map((call) => [call.call_id, REFUSED_ASK]));
    const clientCalls = await withLogFields(
      { step },
      () => runToolCalls(request, added, reply.toolCalls, clientNames, refused),
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

function _toolName(tool: ChatCompletionTool): string {
  return tool.type === "function" ? tool.function.name : "";
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

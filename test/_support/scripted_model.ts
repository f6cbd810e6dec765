// Scripted in-process ChatModel for unit tests of the agent loop; any runtime with structuredClone.
import type { ChatModel, ModelReply, ModelRequest, ToolCall } from "../../lib/agent/mod.ts";

/**
 * One scripted answer: a partial reply (missing fields default to "" and no tool calls), or a
 * function of the request that returns one, or throws to make that model call reject.
 */
export type ScriptStep = Partial<ModelReply> | ((request: ModelRequest) => Partial<ModelReply>);

/** A ChatModel answering from a script, with every request it received. */
export interface ScriptedModel extends ChatModel {
  /** Deep copies of the requests in call order, without `signal`, `onDelta` and `onFallback`. */
  readonly requests: ModelRequest[];
}

/**
 * A model named "scripted" that answers each call with the next step of `steps` (copied, so the
 * caller's array is untouched) and with `{ content: "done" }` once the script is used up. Usage
 * is the step's own `usage`, else 1 prompt and 1 completion token.
 */
export function scriptedModel(steps: readonly ScriptStep[]): ScriptedModel {
  const script = [...steps];
  const requests: ModelRequest[] = [];
  return {
    name: "scripted",
    requests,
    complete(request) {
      const { signal: _s, onDelta: _d, onFallback: _f, ...data } = request;
      requests.push(structuredClone(data));
      const step = script.shift() ?? { content: "done" };
      try {
        const next = typeof step === "function" ? step(request) : step;
        return Promise.resolve({
          content: next.content ?? "",
          toolCalls: next.toolCalls ?? [],
          usage: next.usage ?? { prompt_tokens: 1, completion_tokens: 1 },
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/** A function tool call with the given id, tool name and JSON-encoded arguments. */
export function toolCall(id: string, name: string, args: unknown): ToolCall {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

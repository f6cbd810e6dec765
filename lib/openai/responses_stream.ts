// The Responses API's stream: a run's events mapped onto the Responses SSE event sequence; runtime-neutral.
import type { ResponseMeta } from "./responses_api.ts";
import {
  functionCallItems,
  outputMessage,
  outputMessageId,
  responseObject,
  textPart,
} from "./response_object.ts";
import type { ToolCall } from "../agent/mod.ts";
import type { RunEvent, TurnUsage } from "../session/types.ts";
import type { SseEvent } from "../runtime/mod.ts";

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
      frame("response.content_part.added", { ...at, content_index: 0, part: textPart("") }),
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
        const toolCalls =
          (Array.isArray(event.data.tool_calls) ? event.data.tool_calls : []) as ToolCall[];
        const truncated = event.data.truncated === true;
        const done = responseObject({
          id,
          meta,
          status: "completed",
          output: text,
          toolCalls,
          truncated,
          usage,
        });
        return [
          ...start(),
          frame("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] }),
          frame("response.content_part.done", { ...at, content_index: 0, part: textPart(text) }),
          frame("response.output_item.done", {
            output_index: 0,
            item: outputMessage(id, text, "completed"),
          }),
          ...functionCallItems(id, toolCalls, "completed").flatMap((item, i) => {
            // A client tool call goes out whole: its arguments in one delta.
            const where = { output_index: i + 1, item_id: item.id };
            return [
              frame("response.output_item.added", {
                output_index: i + 1,
                item: { ...item, arguments: "", status: "in_progress" },
              }),
              frame("response.function_call_arguments.delta", { ...where, delta: item.arguments }),
              frame("response.function_call_arguments.done", {
                ...where,
                name: item.name,
                arguments: item.arguments,
              }),
              frame("response.output_item.done", { output_index: i + 1, item }),
            ];
          }),
          // Cut short at max_output_tokens: the same end, named incomplete.
          frame(truncated ? "response.incomplete" : "response.completed", { response: done }),
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

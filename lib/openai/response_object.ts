// The Responses API response: its id, status, object, output items and input-items list, made from a stored run; runtime-neutral.
import { parseTenantSeqId, tenantSeqId } from "./run_ids.ts";
import type { ToolCall } from "../agent/mod.ts";
import type { RunState, TurnUsage } from "../session/types.ts";
import type { InputItem, ResponseMeta } from "./responses_api.ts";

/** Whether a message's stored meta is a Responses API request's. */
export function isResponseMeta(meta: unknown): meta is ResponseMeta {
  return typeof meta === "object" && meta !== null &&
    (meta as { api?: unknown }).api === "responses";
}

/**
 * `resp_<base64url "<tenant>/<session id>">_<seq>` (see `tenantSeqId`): the id routes to its
 * tenant's session without a lookup, and no two tenants' responses share one.
 */
export function responseId(tenant: string, session: string, seq: number): string {
  return tenantSeqId("resp", tenant, session, seq);
}

/**
 * The tenant, session id and seq of a response id, or null when it is not one. `tenant` is null
 * for an id from before tenants were named in it (`resp_<base64url session id>_<seq>`): the caller's.
 */
export function parseResponseId(
  id: string,
): { tenant: string | null; session: string; seq: number } | null {
  return parseTenantSeqId("resp", id);
}

/** The id of a response's output message. */
export function outputMessageId(responseId: string): string {
  return `msg_${responseId.slice("resp_".length)}`;
}

/** A response's status, from its run's state. */
export type ResponseStatus =
  | "queued"
  | "in_progress"
  | "completed"
  | "incomplete"
  | "failed"
  | "cancelled";

/** The response status of a run state. */
export function responseStatus(state: RunState): ResponseStatus {
  return state.status === "running" || state.status === "waiting_for_approval"
    ? "in_progress"
    : state.status;
}

/** The output message item, `text` so far. */
export function outputMessage(id: string, text: string, status: "in_progress" | "completed") {
  return {
    type: "message" as const,
    id: outputMessageId(id),
    status,
    role: "assistant" as const,
    content: status === "completed" ? [textPart(text)] : [],
  };
}

/** The `function_call` output items of a turn that ended on the client's tools. */
export function functionCallItems(
  responseId: string,
  calls: ToolCall[],
  status: "in_progress" | "completed",
) {
  return calls.flatMap((call) =>
    call.type === "function"
      ? [{
        type: "function_call" as const,
        id: `fc_${responseId.slice("resp_".length)}_${call.id}`,
        call_id: call.id,
        name: call.function.name,
        arguments: status === "completed" ? call.function.arguments : "",
        status,
      }]
      : []
  );
}

/** An `output_text` content part. */
export function textPart(text: string) {
  return { type: "output_text" as const, text, annotations: [] as never[] };
}

/** What a response object is built from: its id and request fields, and where its run stands. */
export interface ResponseState {
  id: string;
  meta: ResponseMeta;
  status: ResponseStatus;
  output?: string;
  /** Calls of the client's tools that ended the turn. */
  toolCalls?: ToolCall[];
  /** The reply stopped at `max_output_tokens`: the response is `incomplete`. */
  truncated?: boolean;
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
    status: state.status === "completed" && state.truncated ? "incomplete" : state.status,
    background: meta.background,
    error: state.error ? { code: state.error.type, message: state.error.message } : null,
    incomplete_details: state.status === "completed" && state.truncated
      ? { reason: "max_output_tokens" as const }
      : null,
    instructions: meta.instructions,
    max_output_tokens: meta.max_output_tokens,
    metadata: meta.metadata,
    model: meta.model,
    output: state.status === "completed"
      ? [
        outputMessage(state.id, state.output ?? "", "completed"),
        ...functionCallItems(state.id, state.toolCalls ?? [], "completed"),
      ]
      : [],
    parallel_tool_calls: false,
    previous_response_id: meta.previous_response_id,
    store: meta.store,
    temperature: meta.temperature,
    text: { format: { type: "text" as const } },
    tool_choice: "auto" as const,
    tools: meta.tools ?? [],
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
  const data = items.map((item, i) => {
    const itemId = `${outputMessageId(id)}_in${i}`;
    if ("type" in item) return { ...item, id: itemId, status: "completed" as const };
    return {
      type: "message" as const,
      id: itemId,
      status: "completed" as const,
      role: item.role,
      content: [{
        type: item.role === "assistant" ? "output_text" : "input_text",
        text: item.text,
      }],
    };
  });
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: false,
  };
}

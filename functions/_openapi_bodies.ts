// The answers' JSON bodies as zod schemas, for GET /openapi.json only (no route parses them): the fields each route promises, more allowed; Workers.
import { z } from "zod";

/** The shared error shape of `jsonError` (functions/_http.ts), OpenAI's `{"error":{…}}`. */
export const errorBody = z.looseObject({
  error: z.looseObject({
    message: z.string().describe("What went wrong, in words a caller can act on."),
    type: z.string().describe("A stable machine-readable kind: `not_found`, `invalid_api_key`…"),
  }),
}).meta({
  examples: [{ error: { message: "missing or invalid API key", type: "invalid_api_key" } }],
});

const _usage = z.looseObject({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

const _toolCall = z.looseObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** `POST /v1/chat/completions` without `stream`: a `chat.completion`. */
export const chatCompletionBody = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.looseObject({
    index: z.number().int(),
    message: z.looseObject({
      role: z.literal("assistant"),
      content: z.string().nullable(),
      tool_calls: z.array(_toolCall).optional(),
      files: z.array(z.looseObject({ url: z.string() })).optional()
        .describe("baton's extension: the tools' files as signed links"),
    }),
    finish_reason: z.enum(["stop", "tool_calls", "length"]),
  })),
  usage: _usage,
});

/** A `response` object of the Responses API. */
export const responseBody = z.looseObject({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.number(),
  status: z.enum(["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"]),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  model: z.string(),
  output: z.array(z.looseObject({ type: z.string() })),
  previous_response_id: z.string().nullable(),
  store: z.boolean(),
  usage: z.looseObject({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    total_tokens: z.number().int(),
  }).nullable(),
});

/** `DELETE /v1/responses/{id}`. */
export const responseDeletedBody = z.looseObject({
  id: z.string(),
  object: z.literal("response"),
  deleted: z.literal(true),
});

/** `GET /v1/responses/{id}/input_items`. */
export const inputItemsBody = z.looseObject({
  object: z.literal("list"),
  data: z.array(z.looseObject({ id: z.string(), type: z.string() })),
});

/** A model of `GET /v1/models`. */
export const modelBody = z.looseObject({
  id: z.string(),
  object: z.literal("model"),
  created: z.number(),
  owned_by: z.string(),
});

/** `GET /v1/models`. */
export const modelListBody = z.looseObject({ object: z.literal("list"), data: z.array(modelBody) });

const _runStatus = z.enum([
  "queued",
  "running",
  "waiting_for_approval",
  "completed",
  "failed",
  "cancelled",
]);

/** `POST /v1/runs` (202). */
export const runStartedBody = z.looseObject({
  run_id: z.string(),
  session: z.string(),
  session_key: z.string().describe("names the session on /v1/sessions/{key}"),
  status: z.literal("queued"),
});

/** `GET /v1/runs/{id}`. */
export const runStateBody = z.looseObject({
  run_id: z.string(),
  session: z.string(),
  status: _runStatus,
  output: z.string().optional(),
  error: z.looseObject({ message: z.string(), type: z.string() }).optional(),
});

/** `POST /v1/runs/{id}/steer` (202). */
export const steerBody = z.looseObject({
  run_id: z.string(),
  steer_id: z.string(),
  session: z.string(),
  status: z.literal("steering"),
});

/** `POST /v1/runs/{id}/approval`. */
export const approvalAnsweredBody = z.looseObject({
  run_id: z.string(),
  choice: z.string(),
  status: z.literal("answered"),
});

/** A session's state, `GET /v1/sessions/{key}`. */
export const sessionBody = z.looseObject({
  key: z.string(),
  running: z.boolean(),
  queued: z.number().int(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.string() })),
  omitted: z.number().int(),
});

/** `POST /v1/sessions/{key}/stop|reset`. */
export const sessionControlBody = z.looseObject({
  key: z.string(),
  status: z.enum(["stopped", "reset"]),
});

/** `DELETE /v1/sessions/{key}`. */
export const sessionErasedBody = z.looseObject({
  key: z.string(),
  erased: z.literal(true),
  stopped: z.boolean(),
});

const _totals = z.looseObject({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  cached_tokens: z.number(),
  total_tokens: z.number(),
  cost: z.number(),
  turns: z.number(),
});

/** `GET /v1/usage`: one scope's totals of a UTC day, with its sessions' rows where listed. */
export const usageBody = z.looseObject({
  object: z.literal("usage"),
  day: z.string(),
  totals: _totals,
  sessions: z.array(z.looseObject({ session_key: z.string() })).optional(),
});

/** A scheduled job, `/v1/jobs`. */
export const jobBody = z.looseObject({
  id: z.string(),
  session: z.string(),
  status: z.string(),
  last_runs: z.array(z.looseObject({
    at: z.union([z.string(), z.number()]),
    run_id: z.string().nullable(),
    status: z.string(),
  })),
});

/** `GET /v1/jobs?session=`. */
export const jobListBody = z.looseObject({ data: z.array(jobBody) });

/** A user's memory, `/v1/memory` and `/v1/users/{user}/memory`. */
export const memoryBody = z.looseObject({
  object: z.literal("user.memory"),
  user: z.string(),
  version: z.number().int(),
  facts: z.array(z.looseObject({ n: z.number().int(), text: z.string(), at: z.unknown() })),
});

/** A list answer whose items are described in words. */
export const listBody = z.looseObject({ object: z.literal("list"), data: z.array(z.unknown()) });

/** Any JSON object: answers described in words (erasures, revocations, webhooks' acks). */
export const objectBody = z.looseObject({});

// The answers' JSON bodies as zod schemas, for GET /openapi.json only (no route parses them): the fields each route promises, more allowed; Workers.
import * as z from "zod";

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

/** `GET /healthz`. */
export const healthBody = z.object({ ok: z.literal(true) });

/** `GET /openapi.json`: an OpenAPI 3.1 document (its own schema is OpenAPI's). */
export const openApiBody = z.looseObject({
  openapi: z.string().regex(/^3\.1\./),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});

/**
 * One `data:` frame of `GET /v1/runs/{id}/events`, parsed as JSON: the event (its `type` is the
 * frame's `event:` name) with its own fields, or the relay's error when the stream broke.
 */
export const runEventBody = z.union([
  z.looseObject({
    type: z.string().describe(
      "`run.queued`, `run.started`, `message.delta`, `tool.started`, `approval.request`, " +
        "`run.steered`, `run.completed`, `run.failed`, `run.cancelled`…",
    ),
    run_id: z.string(),
    delta: z.string().optional().describe("`message.delta`: the next piece of the reply"),
    output: z.string().optional().describe("`run.completed`: the whole reply"),
  }),
  errorBody,
]);

/** `POST /v1/runs/{id}/stop`. */
export const runStoppingBody = z.object({ status: z.literal("stopping") });

/** `GET /v1/sessions`: a page of the session directory. */
export const sessionListBody = z.looseObject({
  data: z.array(z.looseObject({
    key: z.string(),
    platform: z.string(),
    title: z.string(),
    created_at: z.number().describe("Unix seconds"),
    last_activity_at: z.number().describe("Unix seconds"),
    status: z.string(),
    queued: z.number().int(),
  })),
  next_cursor: z.string().nullable().describe("The next page's `cursor`; null on the last page."),
});

/** `GET /v1/sessions/{key}/inspect`: the console inspector's view of a session. */
export const sessionInspectBody = z.looseObject({
  key: z.string(),
  claim: z.looseObject({ seq: z.number().int().nullable() }),
  compactions: z.array(z.looseObject({})),
  inbox: z.array(z.looseObject({ seq: z.number().int(), status: z.string() })),
  parts: z.array(z.looseObject({})),
  runs: z.array(z.looseObject({ seq: z.number().int(), events: z.array(z.looseObject({})) })),
});

/** `DELETE /v1/jobs/{id}`. */
export const jobDeletedBody = z.object({ id: z.string(), deleted: z.literal(true) });

/** `DELETE /v1/memory`: every fact of the user forgotten. */
export const memoryClearedBody = z.object({
  object: z.literal("user.memory"),
  user: z.string(),
  forgotten: z.number().int().describe("how many facts were forgotten"),
});

/** `DELETE /v1/memory/{n}` and an admin's `DELETE /v1/users/{user}/memory/{n}`. */
export const memoryFactForgottenBody = z.object({
  object: z.literal("user.memory"),
  user: z.string(),
  forgotten: z.literal(1),
  n: z.number().int(),
});

/** `DELETE /v1/users/{user}`: what was erased (empty counts on a repeat). */
export const userErasedBody = z.looseObject({
  erased: z.literal(true),
  platform: z.string(),
  user: z.string(),
  sessions: z.array(z.string()).describe("the erased sessions' keys"),
  access_record: z.boolean(),
  paired: z.boolean(),
  pairing_codes: z.number().int(),
  listed_in_settings: z.boolean().describe("still let in by ALLOWED_USERS or ADMIN_USERS"),
  memory: z.boolean(),
});

/** A JSON-RPC 2.0 answer of `POST /mcp` (a batch answers a list of them). */
const _jsonRpcAnswer = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.looseObject({}).optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
});

/** `POST /mcp` (200): one JSON-RPC answer, or a batch's. */
export const mcpAnswerBody = z.union([_jsonRpcAnswer, z.array(_jsonRpcAnswer)]);

/** A webhook's acknowledgement: stored (`ok`), or nothing to do and why (`ignored`). */
export const webhookAckBody = z.looseObject({
  ok: z.literal(true),
  ignored: z.string().optional().describe("why no turn was started: a sender not allowed…"),
});

/** Discord's interaction answer: deferred (`type` 5), or a message at once (4, `data`). */
export const discordAckBody = z.looseObject({
  type: z.number().int(),
  data: z.looseObject({ content: z.string() }).optional(),
});

/** Google Chat's acknowledgement: `{}`, no synchronous message. */
export const emptyAckBody = z.object({});

/** The generic webhook's answer: the turn's reply (it waits for it), or an acknowledgement. */
export const genericReplyBody = z.union([
  z.looseObject({ session: z.string(), reply: z.string() }),
  webhookAckBody,
]);

/** `GET /v1/access/pairings`: the codes waiting for the owner. */
export const pairingListBody = z.looseObject({
  object: z.literal("list"),
  data: z.array(z.looseObject({
    code: z.string(),
    platform: z.string(),
    user: z.string(),
    name: z.string(),
    first_message_at: z.string().describe("ISO 8601"),
    expires_at: z.string().describe("ISO 8601: codes expire after an hour"),
  })),
});

const _pairedUser = z.looseObject({
  platform: z.string(),
  user: z.string(),
  name: z.string(),
  approved_at: z.string().describe("ISO 8601"),
  approved_by: z.string().describe("`api:<tenant>`, or the admin who sent /pair"),
});

/** `POST /v1/access/pairings/{code}/approve`. */
export const pairingApprovedBody = z.looseObject({ approved: z.literal(true), user: _pairedUser });

/** `GET /v1/access/users`: paired users, then those the settings list. */
export const accessUserListBody = z.looseObject({
  object: z.literal("list"),
  data: z.array(z.looseObject({
    platform: z.string(),
    user: z.string(),
    source: z.enum(["pairing", "ALLOWED_USERS", "ADMIN_USERS"]),
    name: z.string().optional(),
    approved_at: z.string().optional(),
    approved_by: z.string().optional(),
  })),
});

/** `DELETE /v1/access/users/{user}`. */
export const userRevokedBody = z.object({
  revoked: z.literal(true),
  platform: z.string(),
  user: z.string(),
});

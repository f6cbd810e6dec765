// Every route of the Worker as GET /openapi.json describes it: the request schemas the routes validate with, the answers' bodies, auth and errors; Workers.
import { chatCompletionRequest, responseRequest } from "../lib/openai/mod.ts";
import type { ApiOperation, OperationParameter } from "../lib/api/openapi_builder.ts";
import { runRequestSchemas } from "./run_routes.ts";
import { jobRequestSchema } from "./job_routes.ts";
import * as body from "./_openapi_bodies.ts";
import { DIRECTORY_ORDERS, MAX_PAGE } from "../lib/session/directory_query.ts";
import { DIRECTORY_STATUSES } from "../lib/session/directory_entry.ts";
import { webhookOperations } from "./_openapi_webhooks.ts";

const _sessionKey: OperationParameter = {
  name: "key",
  in: "path",
  description: "A session key: `api:<tenant>:<id>` for the tenant's own API sessions; admin keys " +
    "may name a platform's (`telegram:123`). URL-encode it.",
};
const _user: OperationParameter = {
  name: "user",
  in: "path",
  description:
    "`platform:user`, URL-encoded (`telegram:42`; `api:<tenant>:<user>` for an API user)",
};
const _memoryUser: OperationParameter = {
  name: "user",
  in: "query",
  required: true,
  description: "The `user` your requests send (1 to 256 characters).",
};
const _version: OperationParameter = {
  name: "version",
  in: "query",
  required: true,
  description: "The memory's version as listed: a changed memory answers 409.",
  schema: { type: "integer", minimum: 0 },
};
const _sse = { contentType: "text/event-stream" };
/** Stored bytes, typed by what they are: any media type. */
const _bytes = { contentType: "*/*" };

/** The chat completion a request for `{"model":"…","messages":[…]}` gets, as an example. */
const _completionExample = {
  id: "chatcmpl-3f2a9c1d0b7e4a65",
  object: "chat.completion",
  created: 1767225600,
  model: "gpt-4o-mini",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "Hello! How can I help?" },
    finish_reason: "stop",
  }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
};

/** The API routes under /v1, /healthz, /media and /mcp. */
const _API: ApiOperation[] = [
  {
    method: "get",
    path: "/healthz",
    tag: "meta",
    summary: "Liveness",
    auth: "none",
    responses: { 200: { description: "Up.", body: body.healthBody, example: { ok: true } } },
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "meta",
    summary: "This document",
    auth: "none",
    responses: { 200: { description: "The OpenAPI 3.1 description.", body: body.openApiBody } },
  },
  {
    method: "post",
    path: "/v1/chat/completions",
    tag: "openai",
    summary: "Create a chat completion (OpenAI Chat Completions)",
    description: "One agent turn. `stream: true` answers server-sent `chat.completion.chunk` " +
      "events ending in `[DONE]`. `X-Session-Id` pins the session; otherwise the conversation " +
      "is found by its messages. `Idempotency-Key` makes a retry return the first answer.",
    auth: "tenant",
    requestBody: {
      body: chatCompletionRequest,
      example: { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] },
    },
    responses: {
      200: {
        description: "The completion (JSON), or its chunks (SSE, with `stream: true`).",
        body: body.chatCompletionBody,
        example: _completionExample,
      },
    },
    errors: [409, 413, 422, 502, 503, 504],
  },
  {
    method: "post",
    path: "/v1/responses",
    tag: "openai",
    summary: "Create a response (OpenAI Responses)",
    description: "One agent turn; `previous_response_id` continues a stored one; `background: " +
      "true` answers at once (queued), `stream: true` with response events.",
    auth: "tenant",
    requestBody: { body: responseRequest, example: { model: "gpt-4o-mini", input: "Hello" } },
    responses: {
      200: { description: "The response object (or SSE events).", body: body.responseBody },
    },
    errors: [404, 409, 413, 422, 502, 503, 504],
  },
  {
    method: "get",
    path: "/v1/responses/:id",
    tag: "openai",
    summary: "Retrieve a response",
    auth: "tenant",
    responses: { 200: { description: "The response object.", body: body.responseBody } },
    errors: [404],
  },
  {
    method: "delete",
    path: "/v1/responses/:id",
    tag: "openai",
    summary: "Delete a stored response",
    auth: "tenant",
    responses: { 200: { description: "Deleted.", body: body.responseDeletedBody } },
    errors: [404],
  },
  {
    method: "post",
    path: "/v1/responses/:id/cancel",
    tag: "openai",
    summary: "Cancel a background response",
    auth: "tenant",
    responses: { 200: { description: "The response, cancelled.", body: body.responseBody } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/v1/responses/:id/input_items",
    tag: "openai",
    summary: "List a response's input items",
    auth: "tenant",
    responses: { 200: { description: "The items.", body: body.inputItemsBody } },
    errors: [404],
  },
  {
    method: "get",
    path: "/v1/models",
    tag: "openai",
    summary: "List the models a caller may name",
    auth: "tenant",
    responses: { 200: { description: "`LLM_MODEL`, then `MODELS`.", body: body.modelListBody } },
  },
  {
    method: "get",
    path: "/v1/models/:id",
    tag: "openai",
    summary: "Retrieve a model",
    auth: "tenant",
    responses: { 200: { description: "The model.", body: body.modelBody } },
    errors: [404],
  },
  {
    method: "post",
    path: "/v1/runs",
    tag: "runs",
    summary: "Start a run (a turn) and answer at once",
    auth: "tenant",
    requestBody: { body: runRequestSchemas.run, example: { input: "Summarise my inbox" } },
    responses: {
      202: {
        description: "Queued: follow it at /v1/runs/{run_id}/events.",
        body: body.runStartedBody,
        example: {
          run_id: "run_ZGVmYXVsdC9teS1zZXNzaW9u_1",
          session: "my-session",
          session_key: "api:my-session",
          status: "queued",
        },
      },
    },
    errors: [422],
  },
  {
    method: "get",
    path: "/v1/runs/:id",
    tag: "runs",
    summary: "A run's state",
    auth: "tenant",
    responses: { 200: { description: "Where the run stands.", body: body.runStateBody } },
    errors: [404],
  },
  {
    method: "get",
    path: "/v1/runs/:id/events",
    tag: "runs",
    summary: "Follow a run's events (SSE), from its first",
    auth: "tenant",
    responses: {
      200: {
        ..._sse,
        description: "`event: <type>` frames (`run.started`, `message.delta`, `tool.started`, " +
          "`approval.request`, `run.completed`…) and `:` keep-alive comments, ending after the " +
          "final event. The schema is that of each frame's `data` (JSON): the event's `type`, " +
          "`run_id` and fields, or an error when the relay broke.",
        body: body.runEventBody,
      },
    },
    errors: [404],
  },
  {
    method: "post",
    path: "/v1/runs/:id/stop",
    tag: "runs",
    summary: "Stop a run",
    auth: "tenant",
    responses: { 200: { description: "Stopping.", body: body.runStoppingBody } },
    errors: [404, 409],
  },
  {
    method: "post",
    path: "/v1/runs/:id/steer",
    tag: "runs",
    summary: "Steer a running run: its model reads `input` at its next step",
    auth: "tenant",
    requestBody: { body: runRequestSchemas.steer, example: { input: "Only this week's mail" } },
    responses: { 202: { description: "Given to the run.", body: body.steerBody } },
    errors: [404, 409, 422],
  },
  {
    method: "post",
    path: "/v1/runs/:id/approval",
    tag: "approvals",
    summary: "Answer a run's pending approval",
    auth: "tenant",
    requestBody: { body: runRequestSchemas.approval },
    responses: { 200: { description: "Answered.", body: body.approvalAnsweredBody } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/v1/sessions",
    tag: "sessions",
    summary: "List sessions (the D1 session directory)",
    auth: "tenant",
    parameters: [
      { name: "platform", in: "query", description: "Only this platform's sessions." },
      {
        name: "status",
        in: "query",
        description: "Only sessions in this state.",
        schema: { type: "string", enum: [...DIRECTORY_STATUSES] },
      },
      {
        name: "order",
        in: "query",
        description: "Newest created or newest active first.",
        schema: { type: "string", enum: [...DIRECTORY_ORDERS] },
      },
      { name: "cursor", in: "query", description: "The previous page's `next_cursor`." },
      {
        name: "limit",
        in: "query",
        description: "Page size, 1-100.",
        schema: { type: "integer", minimum: 1, maximum: MAX_PAGE },
      },
    ],
    responses: { 200: { description: "A page of sessions.", body: body.sessionListBody } },
    errors: [400, 503],
  },
  {
    method: "get",
    path: "/v1/sessions/:key",
    tag: "sessions",
    summary: "A session's state and newest messages",
    auth: "tenant",
    parameters: [_sessionKey],
    responses: { 200: { description: "The session.", body: body.sessionBody } },
    errors: [400, 404],
  },
  {
    method: "delete",
    path: "/v1/sessions/:key",
    tag: "sessions",
    summary: "Erase a session (its running turn stopped first)",
    auth: "tenant",
    parameters: [_sessionKey],
    responses: { 200: { description: "Erased.", body: body.sessionErasedBody } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/v1/sessions/:key/inspect",
    tag: "sessions",
    summary: "Inspect a session (the console's inspector): runs, events, context",
    auth: "tenant",
    parameters: [_sessionKey],
    responses: { 200: { description: "The inspection.", body: body.sessionInspectBody } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/v1/sessions/:key/media/:scope/:hash",
    tag: "sessions",
    summary: "A session's stored image or file (bytes)",
    auth: "tenant",
    parameters: [_sessionKey],
    responses: {
      200: {
        ..._bytes,
        description: "The bytes, typed by content (`image/png`, `application/pdf`…).",
      },
    },
    errors: [400, 404],
  },
  ...(["stop", "reset"] as const).map((command): ApiOperation => ({
    method: "post",
    path: `/v1/sessions/:key/${command}`,
    tag: "sessions",
    summary: command === "stop"
      ? "Stop the session's running turn and queue"
      : "Start the session's next conversation afresh",
    auth: "tenant",
    parameters: [_sessionKey],
    responses: { 200: { description: "Done.", body: body.sessionControlBody } },
    errors: [400, 404],
  })),
  {
    method: "get",
    path: "/v1/usage",
    tag: "usage",
    summary: "A UTC day's tokens and cost",
    description: "The caller's tenant's totals and its sessions' rows; `session=` one session; " +
      "admin keys: everyone, `tenant=`, `user=platform:user`. One filter at a time.",
    auth: "tenant",
    parameters: [
      { name: "day", in: "query", description: "YYYY-MM-DD (UTC), default today." },
      { name: "session", in: "query", description: "A session key." },
      { name: "user", in: "query", description: "`platform:user` (admin keys)." },
      { name: "tenant", in: "query", description: "A tenant's name (admin keys)." },
      {
        name: "limit",
        in: "query",
        description: "Most session rows, 1-500 (default 100).",
        schema: { type: "integer", minimum: 1, maximum: 500 },
      },
    ],
    responses: { 200: { description: "The day's figures.", body: body.usageBody } },
    errors: [400, 404],
  },
  {
    method: "post",
    path: "/v1/jobs",
    tag: "jobs",
    summary: "Schedule a job: a prompt run in a session at a time, after a delay, or repeatedly",
    auth: "tenant",
    requestBody: {
      body: jobRequestSchema,
      example: { session: "my-session", prompt: "Daily digest", schedule: { cron: "0 8 * * *" } },
    },
    responses: { 201: { description: "The job.", body: body.jobBody } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/v1/jobs",
    tag: "jobs",
    summary: "List a session's jobs",
    auth: "tenant",
    parameters: [{ name: "session", in: "query", required: true, description: "The session." }],
    responses: { 200: { description: "The jobs.", body: body.jobListBody } },
    errors: [400, 404],
  },
  {
    method: "get",
    path: "/v1/jobs/:id",
    tag: "jobs",
    summary: "A job with its last runs",
    auth: "tenant",
    responses: { 200: { description: "The job.", body: body.jobBody } },
    errors: [404],
  },
  {
    method: "delete",
    path: "/v1/jobs/:id",
    tag: "jobs",
    summary: "Delete a job",
    auth: "tenant",
    responses: { 200: { description: "Deleted.", body: body.jobDeletedBody } },
    errors: [404],
  },
  ...(["run", "pause", "resume"] as const).map((op): ApiOperation => ({
    method: "post",
    path: `/v1/jobs/:id/${op}`,
    tag: "jobs",
    summary: op === "run" ? "Run a job now" : op === "pause" ? "Pause a job" : "Resume a job",
    auth: "tenant",
    responses: {
      [op === "run" ? 202 : 200]: { description: "The job.", body: body.jobBody },
    },
    errors: [404, 409],
  })),
  {
    method: "get",
    path: "/v1/memory",
    tag: "memory",
    summary: "An API user's remembered facts",
    auth: "tenant",
    parameters: [_memoryUser],
    responses: { 200: { description: "The memory.", body: body.memoryBody } },
    errors: [400],
  },
  {
    method: "delete",
    path: "/v1/memory",
    tag: "memory",
    summary: "Forget all of an API user's facts",
    auth: "tenant",
    parameters: [_memoryUser],
    responses: { 200: { description: "Forgotten.", body: body.memoryClearedBody } },
    errors: [400],
  },
  {
    method: "delete",
    path: "/v1/memory/:n",
    tag: "memory",
    summary: "Forget one fact, by its listed number",
    auth: "tenant",
    parameters: [_memoryUser, _version],
    responses: { 200: { description: "Forgotten.", body: body.memoryFactForgottenBody } },
    errors: [400, 404, 409],
  },
  {
    method: "get",
    path: "/v1/access/pairings",
    tag: "access",
    summary: "Pending pairing requests",
    auth: "admin",
    responses: { 200: { description: "The pending pairings.", body: body.pairingListBody } },
  },
  {
    method: "post",
    path: "/v1/access/pairings/:code/approve",
    tag: "access",
    summary: "Approve a pairing code",
    auth: "admin",
    responses: { 200: { description: "Approved.", body: body.pairingApprovedBody } },
    errors: [400, 404, 409],
  },
  {
    method: "get",
    path: "/v1/access/users",
    tag: "access",
    summary: "Users let in: paired, ALLOWED_USERS, ADMIN_USERS",
    auth: "admin",
    responses: { 200: { description: "The users.", body: body.accessUserListBody } },
  },
  {
    method: "delete",
    path: "/v1/access/users/:user",
    tag: "access",
    summary: "Revoke a paired user",
    auth: "admin",
    parameters: [_user],
    responses: { 200: { description: "Revoked.", body: body.userRevokedBody } },
    errors: [400, 404, 409],
  },
  {
    method: "delete",
    path: "/v1/users/:user",
    tag: "users",
    summary: "Erase a chat user: their sessions, record and memory",
    auth: "admin",
    parameters: [_user],
    responses: { 200: { description: "Erased.", body: body.userErasedBody } },
    errors: [400],
  },
  {
    method: "get",
    path: "/v1/users/:user/memory",
    tag: "users",
    summary: "A user's remembered facts",
    auth: "admin",
    parameters: [_user],
    responses: { 200: { description: "The memory.", body: body.memoryBody } },
    errors: [400],
  },
  {
    method: "delete",
    path: "/v1/users/:user/memory/:n",
    tag: "users",
    summary: "Forget one of a user's facts",
    auth: "admin",
    parameters: [_user, _version],
    responses: { 200: { description: "Forgotten.", body: body.userFactForgottenBody } },
    errors: [400, 404, 409],
  },
  {
    method: "post",
    path: "/mcp",
    tag: "mcp",
    summary: "MCP endpoint (streamable HTTP, JSON-RPC 2.0): baton as an MCP server",
    auth: "tenant",
    requestBody: {
      body: { jsonSchema: { type: "object", description: "A JSON-RPC 2.0 request or batch." } },
      description: "MCP's own format (modelcontextprotocol.io); each request stands alone.",
    },
    responses: {
      200: {
        description: "A JSON-RPC 2.0 answer (or a batch's list of them), as JSON.",
        body: body.mcpAnswerBody,
      },
      202: { description: "A notification, accepted." },
    },
  },
  {
    method: "get",
    path: "/media/:scope/:hash",
    tag: "media",
    summary: "A file a reply linked to (signed, expiring link)",
    auth: "none",
    parameters: [
      { name: "exp", in: "query", required: true, description: "Expiry, Unix seconds." },
      { name: "sig", in: "query", required: true, description: "HMAC under MEDIA_URL_SECRET." },
    ],
    responses: {
      200: {
        ..._bytes,
        description: "The bytes, typed by content (`image/png`, `application/pdf`…).",
      },
    },
    errors: [403, 404, 503],
  },
];

/** Every route of the Worker, as the document describes it. */
export function apiOperations(): ApiOperation[] {
  return [..._API, ...webhookOperations()];
}

// Every route of the Worker as GET /openapi.json describes it: the request schemas the routes validate with, the answers' bodies, auth and errors; Workers.
import { chatCompletionRequest, responseRequest } from "../lib/openai/mod.ts";
import type { ApiOperation } from "../lib/api/openapi_builder.ts";
import { runRequestSchemas } from "./run_routes.ts";
import * as body from "./_openapi_bodies.ts";
import { webhookOperations } from "./_openapi_webhooks.ts";
import type { PlatformAdapter } from "../lib/chat/mod.ts";
import { SESSION_OPERATIONS } from "./_openapi_session_operations.ts";

const _sse = { contentType: "text/event-stream" };

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

/** The chat, responses, models and runs routes, /healthz and /openapi.json. */
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
];

/** Every route of the Worker, as the document describes it; `adapters`: every webhook platform's. */
export function apiOperations(adapters: readonly PlatformAdapter[]): ApiOperation[] {
  return [..._API, ...SESSION_OPERATIONS, ...webhookOperations(adapters)];
}

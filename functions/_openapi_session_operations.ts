// The document's operations for sessions, usage, jobs, memory, access, users, MCP and stored media (the chat and runs routes are in _openapi_operations.ts); Workers.
import type { ApiOperation, OperationParameter } from "../lib/api/openapi_builder.ts";
import { jobRequestSchema } from "./job_routes.ts";
import * as body from "./_openapi_bodies.ts";
import { DIRECTORY_ORDERS, MAX_PAGE } from "../lib/session/directory_query.ts";
import { DIRECTORY_STATUSES } from "../lib/session/directory_entry.ts";

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
/** Stored bytes, typed by what they are: any media type. */
const _bytes = { contentType: "*/*" };

/** The routes under /v1/sessions, /v1/usage, /v1/jobs, /v1/memory, /v1/access, /v1/users, and /mcp and /media. */
export const SESSION_OPERATIONS: ApiOperation[] = [
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
    responses: { 200: { description: "Forgotten.", body: body.memoryFactForgottenBody } },
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

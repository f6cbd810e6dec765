// GET /openapi.json: the OpenAPI 3.1 description of the Worker's whole HTTP surface, built on first request and kept per isolate; Workers.
import type { Context } from "hono";
import { ERROR_SCHEMA, jsonSchemaOf, openApiPaths } from "../lib/api/openapi_builder.ts";
import { apiOperations } from "./_openapi_operations.ts";
import { platformAdapters } from "../lib/platforms/mod.ts";
import { errorBody } from "./_openapi_bodies.ts";
import type { App } from "./_http.ts";
import type { PlatformAdapter } from "../lib/chat/mod.ts";

let _document: Promise<Record<string, unknown>> | null = null;

/**
 * The document: one entry per route (functions/_openapi_operations.ts), request bodies from the
 * zod schemas the routes validate with, the shared error shape, the two kinds of API key. Built
 * once per isolate, on the first call: start-up pays nothing for it (nor for the webhook
 * platforms' adapters it reads).
 */
export function openApiDocument(): Promise<Record<string, unknown>> {
  return _document ??= platformAdapters().then(_describe);
}

/** The document over every webhook platform's adapter. */
function _describe(adapters: readonly PlatformAdapter[]): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "baton",
      version: "0.1.0",
      description: "An LLM agent behind chat webhooks, email and an OpenAI-compatible API. " +
        'Every error is `{"error":{"message","type"}}`. Webhook bodies are the platforms\' ' +
        "own formats and are not described here.",
    },
    tags: [
      "openai",
      "runs",
      "approvals",
      "sessions",
      "usage",
      "jobs",
      "memory",
      "access",
      "users",
      "mcp",
      "media",
      "webhooks",
      "meta",
    ].map((name) => ({ name })),
    paths: openApiPaths(apiOperations(adapters)),
    components: {
      schemas: { [ERROR_SCHEMA]: jsonSchemaOf(errorBody, "output") },
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description: "A tenant's API key: `GATEWAY_API_KEY` (tenant `default`) or one of " +
            "`GATEWAY_API_KEYS` (`name:key`). A tenant sees only its own sessions, runs, " +
            "responses, jobs and usage; another's are 404. No key configured: 403.",
        },
        adminKey: {
          type: "http",
          scheme: "bearer",
          description: "An API key whose tenant is listed in `ADMIN_API_KEYS` (default " +
            "`default`): also /v1/access, /v1/users, platform sessions and everyone's usage. " +
            "Another tenant's key gets 403 `permission_denied`.",
        },
      },
    },
  };
}

/** `GET /openapi.json`, without auth: the document, to be cached by clients for an hour. */
export async function openApiRoute(c: Context<App>): Promise<Response> {
  return c.json(await openApiDocument(), 200, { "cache-control": "public, max-age=3600" });
}

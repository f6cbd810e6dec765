// Builds an OpenAPI 3.1 document from a compact operation table whose bodies are zod schemas (zod 4's JSON Schema, draft 2020-12); runtime-neutral.
import * as z from "zod";

/** Who may call an operation: anyone, any API key's tenant, or an admin tenant's key only. */
export type OperationAuth = "none" | "tenant" | "admin";

/** A JSON body: a zod schema (converted), or a JSON Schema written by hand (used as is). */
export type BodySchema = z.ZodType | { jsonSchema: Record<string, unknown> };

/** One answer of an operation. */
export interface OperationResponse {
  description: string;
  /** The JSON body; absent for an answer with no JSON body (or see `contentType`). */
  body?: BodySchema;
  /** A body that is not JSON (SSE, bytes, TwiML): its media type, described by `description`. */
  contentType?: string;
  example?: unknown;
}

/** A query or path parameter. */
export interface OperationParameter {
  name: string;
  in: "query" | "path";
  description: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

/** One route as the document describes it: hono's path (`:id`), method, auth, bodies. */
export interface ApiOperation {
  method: "get" | "post" | "delete";
  /** As hono registers it: `/v1/runs/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: OperationAuth;
  /** The JSON request body the route validates (`parseJson`), or an opaque one (webhooks). */
  requestBody?: { body: BodySchema; description?: string; example?: unknown; required?: boolean };
  /** Query parameters; path parameters are found in `path` unless described here. */
  parameters?: OperationParameter[];
  /** Success answers, by status. Error answers come from `errors`. */
  responses: Record<number, OperationResponse>;
  /** Error statuses this route answers with the shared error shape (besides the auth ones). */
  errors?: number[];
}

/** The name of the shared error schema in `components.schemas`. */
export const ERROR_SCHEMA = "Error";

/** Reasons for each error status, as the error responses describe them. */
const _ERROR_TEXT: Record<number, string> = {
  400: "The request is malformed: the message names the field.",
  401: "Missing or invalid API key (`invalid_api_key`), or a webhook's bad signature.",
  403: "The API or the webhook is not configured (`not_configured`), or the key's tenant is " +
    "not an admin (`permission_denied`), or a link's signature is not valid.",
  404: "No such resource, or one of another tenant (`not_found`).",
  405: "The path exists but not with this method (`method_not_allowed`).",
  409: "The resource is not in a state that allows this.",
  413: "The request body is too large.",
  422: "The message was dropped by the deployment's hook, or an Idempotency-Key was reused " +
    "with another body.",
  429: "Over a quota (turns per minute, tokens per day): see `retry-after`.",
  502: "The model provider failed.",
  503: "A store is unavailable or not configured: retry later.",
  504: "The turn timed out.",
};

/**
 * A zod schema's JSON Schema for OpenAPI 3.1 (draft 2020-12): the `input` side for a request body
 * (what a client may send), the `output` side for an answer. Refinements JSON Schema cannot say
 * (a depth limit, "at most 16 pairs") are left out, never a throw: the document stays buildable.
 */
export function jsonSchemaOf(
  body: BodySchema,
  io: "input" | "output",
): Record<string, unknown> {
  if ("jsonSchema" in body) return body.jsonSchema;
  const schema = z.toJSONSchema(body, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
  }) as Record<string, unknown>;
  // The dialect is the document's (jsonSchemaDialect): repeating it on every schema is noise.
  delete schema.$schema;
  return schema;
}

/** Hono's `/v1/runs/:id` as OpenAPI's `/v1/runs/{id}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/** The `paths` object of `operations`: auth, parameters, bodies, and the shared error answers. */
export function openApiPaths(
  operations: readonly ApiOperation[],
): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    (paths[path] ??= {})[op.method] = _operation(op);
  }
  return paths;
}

function _operation(op: ApiOperation): Record<string, unknown> {
  const described = new Set((op.parameters ?? []).map((p) => `${p.in}:${p.name}`));
  const pathParams = [...op.path.matchAll(/:([A-Za-z0-9_]+)/g)]
    .map((m) => m[1])
    .filter((name) => !described.has(`path:${name}`))
    .map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  const parameters = [
    ...pathParams,
    ...(op.parameters ?? []).map((p) => ({
      name: p.name,
      in: p.in,
      description: p.description,
      required: p.in === "path" ? true : p.required ?? false,
      schema: p.schema ?? { type: "string" },
    })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(op.responses)) {
    responses[status] = _response(answer);
  }
  const errors = new Set([
    ...(op.auth === "none" ? [] : [401, 403, 429]),
    ...(op.requestBody ? [400] : []),
    ...(op.errors ?? []),
  ]);
  for (const status of [...errors].sort((a, b) => a - b)) {
    responses[String(status)] ??= {
      description: _ERROR_TEXT[status] ?? "An error.",
      content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    };
  }
  return {
    operationId: _operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.auth === "none"
      ? { security: [] }
      : { security: [{ [op.auth === "admin" ? "adminKey" : "apiKey"]: [] }] }),
    ...(parameters.length ? { parameters } : {}),
    ...(op.requestBody
      ? {
        requestBody: {
          required: op.requestBody.required ?? true,
          ...(op.requestBody.description ? { description: op.requestBody.description } : {}),
          content: {
            "application/json": {
              schema: jsonSchemaOf(op.requestBody.body, "input"),
              ...(op.requestBody.example !== undefined ? { example: op.requestBody.example } : {}),
            },
          },
        },
      }
      : {}),
    responses,
  };
}

function _response(answer: OperationResponse): Record<string, unknown> {
  if (answer.contentType) {
    return {
      description: answer.description,
      content: {
        [answer.contentType]: {
          schema: answer.body ? jsonSchemaOf(answer.body, "output") : {},
          ...(answer.example !== undefined ? { example: answer.example } : {}),
        },
      },
    };
  }
  if (!answer.body) return { description: answer.description };
  return {
    description: answer.description,
    content: {
      "application/json": {
        schema: jsonSchemaOf(answer.body, "output"),
        ...(answer.example !== undefined ? { example: answer.example } : {}),
      },
    },
  };
}

/** `get /v1/runs/:id/events` → `getV1RunsIdEvents`: unique per method and path, stable. */
function _operationId(op: ApiOperation): string {
  const words = op.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return op.method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

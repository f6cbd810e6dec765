// A JSON body checked against its schema and the nesting limit, refused with a message naming the field; runtime-neutral.
import type { z } from "zod";
import { parseJsonBody, PayloadError } from "./json_body.ts";
import { jsonDepthError, MAX_BODY_DEPTH } from "./json_depth.ts";

/**
 * Parses `bytes` as JSON (the one decoder, `parseJsonBody`) and validates it, or throws
 * `PayloadError` naming the field. The schema's own limits come first (a client's JSON Schema:
 * `MAX_SCHEMA_DEPTH`, named precisely), then the body's nesting (`MAX_BODY_DEPTH`), wherever it
 * is. The Worker answers the error 400 (API bodies and webhook payloads alike).
 */
export function parsePayload<S extends z.ZodType>(schema: S, bytes: Uint8Array): z.infer<S> {
  const value = parseJsonBody(bytes);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? issue.path.join(".") : "body";
    throw new PayloadError(`${field}: ${issue.message}`);
  }
  const tooDeep = jsonDepthError(value, MAX_BODY_DEPTH);
  if (tooDeep) {
    // The first few steps name the field the client set; the rest is its nesting.
    const field = tooDeep.path.slice(0, 4).join(".") || "body";
    throw new PayloadError(`${field}: ${tooDeep.message}`);
  }
  return parsed.data;
}

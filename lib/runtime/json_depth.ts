// Depth limits on JSON a request carries: how deep a parsed value nests, checked before anything is stored; runtime-neutral.
import * as z from "zod";

// Why limits at all: a session keeps what a request carries (a client's tools, its response
// schema) as JSON in its SQLite, and reads it back through SQLite's JSON functions, which refuse
// anything nested deeper than 1,000 levels (JSON_MAX_DEPTH). A message stored past that can
// never be read back: it blocked its session for good (issue 26, finding 1). Both limits below
// sit an order of magnitude under 1,000, leaving ample room for the levels baton wraps around a
// value when it stores it (a message, its meta, a tools list: fewer than ten).

/**
 * How deep a client's JSON Schema may nest (a tool's `parameters`, a structured-output
 * `schema`), counted in JSON levels (`{}` is one). OpenAI's own structured outputs allow 10
 * levels of schema nesting, about 20 JSON levels (`properties` and the property's schema are two
 * per step); 64 admits every schema a model provider accepts, with room to spare.
 */
export const MAX_SCHEMA_DEPTH = 64;

/**
 * How deep any JSON request body may nest (the API routes and the generic webhook): a schema
 * field at `MAX_SCHEMA_DEPTH` plus the few levels the body puts around it, doubled. Nothing a
 * client has reason to send comes near it.
 */
export const MAX_BODY_DEPTH = 128;

/** Where a value nests too deep: the message, and the path (keys, indexes) of the first level past the limit. */
export interface JsonDepthError {
  message: string;
  path: (string | number)[];
}

/**
 * `null` when `value` nests at most `limit` levels (a scalar is 0, `{}` and `[]` are 1), else
 * the error: "nesting deeper than `limit` levels" and the path to the first container past it.
 * Iterative, and stops at the first such container: a 1 MB body can nest 500,000 levels, and a
 * recursive walk would overflow the stack on it.
 */
export function jsonDepthError(value: unknown, limit: number): JsonDepthError | null {
  type Step = { value: unknown; depth: number; key?: string | number; parent?: Step };
  const stack: Step[] = [{ value, depth: 0 }];
  while (stack.length) {
    const step = stack.pop()!;
    if (typeof step.value !== "object" || step.value === null) continue;
    const depth = step.depth + 1;
    if (depth > limit) {
      const path: (string | number)[] = [];
      for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) {
        path.unshift(at.key);
      }
      return { message: `nesting deeper than ${limit} levels`, path };
    }
    const entries = Array.isArray(step.value)
      ? step.value.map((v, i) => [i, v] as const)
      : Object.entries(step.value);
    for (const [key, child] of entries) stack.push({ value: child, depth, key, parent: step });
  }
  return null;
}

/**
 * A JSON Schema a client sends (a tool's `parameters`, a response format's `schema`): an object
 * of any content, nested at most `MAX_SCHEMA_DEPTH` levels; deeper is an issue on the field.
 * Built on first use (`z.lazy`), as every request schema: start-up builds no schema a route needs.
 */
export const jsonSchemaObject = z.lazy(() =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const error = jsonDepthError(value, MAX_SCHEMA_DEPTH);
    if (error) ctx.addIssue({ code: "custom", message: error.message });
  })
);

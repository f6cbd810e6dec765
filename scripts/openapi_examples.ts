// Turns every example in the OpenAPI document into a typed constant of the generated types, so `deno check` proves examples and schemas agree (test/openapi_client_test.ts); runtime-neutral.

/** A JSON value read from the document. */
// deno-lint-ignore no-explicit-any
type Json = any;

/** One example of the document: where it is, the generated type it must have, its value. */
export interface OpenApiExample {
  /** e.g. `POST /v1/runs request application/json example`. */
  where: string;
  /** A type expression over lib/api/openapi_types.ts's `paths` and `components`. */
  type: string;
  value: unknown;
}

/** `s` as a TypeScript string literal (JSON's quoting is TypeScript's). */
const _q = (s: string) => JSON.stringify(s);

/**
 * The examples of a schema and of the schemas inside it: its `examples` (and 3.0's `example`),
 * its properties' and items' (typed as the property, the item), its anyOf/oneOf branches' (an
 * instance of a branch must be one of the union). `$ref`s are left to the components' own walk.
 */
function _schemaExamples(schema: Json, type: string, where: string, out: OpenApiExample[]) {
  if (!schema || typeof schema !== "object" || "$ref" in schema) return;
  for (const value of schema.examples ?? []) out.push({ where: `${where} examples`, type, value });
  if ("example" in schema) out.push({ where: `${where} example`, type, value: schema.example });
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    _schemaExamples(sub, `NonNullable<${type}>[${_q(name)}]`, `${where}.${name}`, out);
  }
  if (schema.items) {
    _schemaExamples(schema.items, `NonNullable<${type}>[number]`, `${where}[]`, out);
  }
  for (const branch of [...schema.anyOf ?? [], ...schema.oneOf ?? []]) {
    _schemaExamples(branch, type, where, out);
  }
}

/** The examples of one media type of a body: `example`, `examples.*.value`, its schema's. */
function _mediaExamples(media: Json, type: string, where: string, out: OpenApiExample[]) {
  if ("example" in media) out.push({ where: `${where} example`, type, value: media.example });
  for (const [name, ex] of Object.entries<Json>(media.examples ?? {})) {
    if (ex && "value" in ex) {
      out.push({ where: `${where} examples.${name}`, type, value: ex.value });
    }
  }
  _schemaExamples(media.schema, type, `${where} schema`, out);
}

/**
 * Every example the document gives — request and response bodies, parameters, component
 * schemas — each with the type openapi-typescript generates for the place it stands.
 */
export function openApiExamples(doc: Json): OpenApiExample[] {
  const out: OpenApiExample[] = [];
  for (const [path, ops] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(ops)) {
      if (method === "parameters" || !op || typeof op !== "object") continue;
      const base = `paths[${_q(path)}][${_q(method)}]`;
      const name = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        const type = `NonNullable<${base}["parameters"][${_q(p.in)}]>[${_q(p.name)}]`;
        if ("example" in p) {
          out.push({ where: `${name} ${p.in} ${p.name}`, type, value: p.example });
        }
        _schemaExamples(p.schema, type, `${name} ${p.in} ${p.name}`, out);
      }
      for (const [mt, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
        const type = `NonNullable<${base}["requestBody"]>["content"][${_q(mt)}]`;
        _mediaExamples(media, type, `${name} request ${mt}`, out);
      }
      for (const [status, answer] of Object.entries<Json>(op.responses ?? {})) {
        const key = /^\d+$/.test(status) ? status : _q(status);
        for (const [mt, media] of Object.entries<Json>(answer.content ?? {})) {
          const type = `${base}["responses"][${key}]["content"][${_q(mt)}]`;
          _mediaExamples(media, type, `${name} ${status} ${mt}`, out);
        }
      }
    }
  }
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    _schemaExamples(schema, `components["schemas"][${_q(name)}]`, `components.${name}`, out);
  }
  return out;
}

/**
 * A TypeScript module that assigns each example to a constant of its generated type, importing
 * the types from `typesSpecifier`. Object literals get excess-property checks, so an example
 * with a field the schema lacks, a wrong type or a missing required field does not type-check;
 * each line starts with a comment naming the example, which `deno check` prints with the error.
 */
export function openApiExamplesProgram(doc: Json, typesSpecifier: string): string {
  const lines = openApiExamples(doc).map((ex, i) =>
    `/* ${ex.where.replaceAll("*/", "*\\/")} */ export const _example${i}: ${ex.type} = ` +
    `${JSON.stringify(ex.value)};`
  );
  return `// Generated: the OpenAPI document's examples, typed (scripts/openapi_examples.ts).\n` +
    `import type { components, paths } from ${_q(typesSpecifier)};\n` +
    `export type { components, paths };\n` + lines.join("\n") + "\n";
}

// Test support: checks of what an adapter sends against a platform's own TypeScript declarations, at run time; Deno (tests only).
import { assert } from "@std/assert";

/**
 * Every key of the official type `T`, as a table the compiler ties to `T`: a missing key or one the
 * platform does not declare is a type error, so the table cannot drift from the platform's package.
 */
export type KeyTable<T> = { [K in keyof Required<T>]: true };

/**
 * Asserts that every key of `body` is one the platform declares (`table`, see {@link KeyTable}) and that
 * each of `required` is present: a field the platform would reject, or one it needs and baton left out,
 * fails the test. `what` names the body in the failure.
 */
export function assertDeclaredKeys<T>(
  what: string,
  body: unknown,
  table: KeyTable<T>,
  required: readonly (keyof T & string)[] = [],
): void {
  assert(
    typeof body === "object" && body !== null && !Array.isArray(body),
    `${what}: not an object`,
  );
  const declared = new Set(Object.keys(table));
  const unknown = Object.keys(body).filter((k) => !declared.has(k));
  assert(
    unknown.length === 0,
    `${what}: keys the platform does not declare: ${unknown.join(", ")}`,
  );
  const missing = required.filter((k) => !(k in body));
  assert(missing.length === 0, `${what}: required keys missing: ${missing.join(", ")}`);
}

/** Every key that any member of the union `T` declares (`keyof` of a union gives only the shared ones). */
export type UnionKeys<T> = T extends unknown ? keyof T : never;

/**
 * The union `T` as one object type holding each member's keys, so that {@link KeyTable} and
 * {@link assertDeclaredKeys} can check a body against a union (Slack's `ChatPostMessageArguments`,
 * Discord's `APIInteractionResponse`): a key no member declares still fails.
 */
export type AnyMemberOf<T> = { [K in UnionKeys<T>]?: unknown };

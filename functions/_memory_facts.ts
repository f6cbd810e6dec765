// What the memory routes share: a memory listed with its facts numbered, and one listed fact forgotten at the version it was listed at (409 once it changed); Workers.
import type { Context } from "hono";
import type { MemoryFact, UserMemory } from "../lib/access/user_memory.ts";
import { type App, RequestError } from "./_http.ts";

/** The object that holds a memory (a user's access record), as the routes call it. */
export interface MemoryHolder {
  memory(): Promise<UserMemory>;
  forgetShownFact(
    which: number,
    version: number,
  ): Promise<{ forgotten: number; conflict: boolean }>;
}

/** A memory as the routes list it: each fact numbered as a one-fact delete names it. */
export function listedMemory(memory: UserMemory): {
  version: number;
  facts: (MemoryFact & { n: number })[];
} {
  return {
    version: memory.version,
    facts: memory.facts.map((fact, i) => ({ n: i + 1, text: fact.text, at: fact.at })),
  };
}

/**
 * Forgets fact `{n}` (the path's) of the memory at `?version=` (the version it was listed at), and
 * returns `n`. Facts are numbered by position, so after any change the same number may name
 * another fact: a memory changed since is a 409 `memory_changed`; a fact not there a 404; a bad
 * number or version a 400 naming `listedBy`, the route that lists it.
 */
export async function forgetListedFact(
  c: Context<App>,
  holder: MemoryHolder,
  listedBy: string,
): Promise<number> {
  const n = Number(c.req.param("n"));
  const version = Number(c.req.query("version"));
  if (!Number.isInteger(n) || n < 1 || n > 9_999) {
    throw new RequestError(400, "n: expected a fact's number, from 1", "invalid_request_error");
  }
  if (!Number.isInteger(version) || version < 0) {
    throw new RequestError(
      400,
      `version: expected the memory's version as listed (${listedBy})`,
      "invalid_request_error",
    );
  }
  const result = await holder.forgetShownFact(n, version);
  if (result.conflict) {
    throw new RequestError(
      409,
      "the memory changed since it was listed; list it again",
      "memory_changed",
    );
  }
  if (!result.forgotten) throw new RequestError(404, `no fact #${n}`, "not_found");
  return n;
}

// Unit tests for lib/session/response_deletions.ts; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import type { KeyStorage } from "../api/mod.ts";
import { ResponseDeletions } from "./response_deletions.ts";

function memory(): KeyStorage & { map: Map<string, unknown> } {
  const map = new Map<string, unknown>();
  return {
    map,
    get: <T>(key: string) => map.get(key) as T | undefined,
    put: <T>(key: string, value: T) => void map.set(key, value),
  };
}

Deno.test("ResponseDeletions.delete() marks an existing response once; deleted() then finds it", () => {
  const deletions = new ResponseDeletions(memory());
  assertStrictEquals(deletions.deleted(3), false);
  assertStrictEquals(deletions.delete(3, () => true), true);
  assertStrictEquals(deletions.deleted(3), true);
  assertStrictEquals(deletions.delete(3, () => true), false, "a second deletion finds none");
  assertStrictEquals(deletions.deleted(4), false, "only that response");
});

Deno.test("ResponseDeletions.delete() of a response that does not exist marks nothing", () => {
  const storage = memory();
  const deletions = new ResponseDeletions(storage);
  assertStrictEquals(deletions.delete(9, () => false), false);
  assertStrictEquals(deletions.deleted(9), false);
  assertEquals(storage.map.size, 0);
});

Deno.test("ResponseDeletions reads the deletions a session stored before this store (deleted:<seq> keys)", () => {
  const storage = memory();
  storage.put("deleted:7", 1);
  assertStrictEquals(new ResponseDeletions(storage).deleted(7), true);
  new ResponseDeletions(storage).delete(8, () => true);
  assertStrictEquals(storage.map.has("deleted:8"), true);
});

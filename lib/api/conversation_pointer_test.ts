// Unit tests for lib/api/conversation_pointer.ts; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { ConversationPointer } from "./conversation_pointer.ts";
import type { KeyStorage } from "./request_keys.ts";

function memory(): KeyStorage & { keys(): string[] } {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    put: <T>(key: string, value: T) => void map.set(key, value),
    keys: () => [...map.keys()],
  };
}

Deno.test("ConversationPointer names no session until pointed, then the last one pointed", () => {
  const storage = memory();
  assertStrictEquals(new ConversationPointer(storage).session(), null);
  new ConversationPointer(storage).point("c1");
  assertStrictEquals(new ConversationPointer(storage).session(), "c1", "kept in its storage");
  new ConversationPointer(storage).point("c2");
  assertStrictEquals(new ConversationPointer(storage).session(), "c2");
  assertEquals(storage.keys(), ["session"], "one key per pointer object");
});

Deno.test("ConversationPointer refuses to point at no session", () => {
  const pointer = new ConversationPointer(memory());
  let thrown: unknown;
  try {
    pointer.point("");
  } catch (error) {
    thrown = error;
  }
  assertStrictEquals(thrown instanceof TypeError, true);
  assertStrictEquals(pointer.session(), null);
});

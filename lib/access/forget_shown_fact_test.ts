// Unit tests of the console's forgetting of one remembered fact, checked against the memory it showed; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { memoryRecordStorage } from "./_memory_record_storage.ts";
import { forgetShownFact } from "./forget_shown_fact.ts";
import { readMemory, rememberFact } from "./user_memory.ts";

const LIMITS = { maxChars: 400, factMaxChars: 100 };

Deno.test("forgetShownFact() forgets fact N of the version shown, and nothing once the memory changed", () => {
  const storage = memoryRecordStorage();
  rememberFact(storage, "likes tea", LIMITS, 1);
  rememberFact(storage, "lives in Oslo", LIMITS, 2);
  const shown = readMemory(storage);
  // The user remembered a fact since the console read the list: its numbers may not be the same.
  rememberFact(storage, "has a cat", LIMITS, 3);
  assertEquals(forgetShownFact(storage, 1, shown.version), { forgotten: 0, conflict: true });
  assertStrictEquals(readMemory(storage).facts.length, 3);
  const now = readMemory(storage);
  assertEquals(forgetShownFact(storage, 2, now.version), { forgotten: 1, conflict: false });
  assertEquals(readMemory(storage).facts.map((f) => f.text), ["likes tea", "has a cat"]);
  // A repeat names the old version: nothing more is forgotten.
  assertEquals(forgetShownFact(storage, 2, now.version), { forgotten: 0, conflict: true });
  assertEquals(forgetShownFact(storage, 9, now.version + 1), { forgotten: 0, conflict: false });
});

// Unit tests of one user's memory in their access record: remembering under the caps, forgetting, commands answered once; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { memoryRecordStorage } from "./_memory_record_storage.ts";
import {
  answerMemoryCommand,
  forgetFacts,
  memoryCommandOf,
  memoryListText,
  readMemory,
  rememberFact,
} from "./user_memory.ts";

const LIMITS = { maxChars: 40, factMaxChars: 20 };
const T0 = 1_800_000_000_000;

Deno.test("rememberFact() stores facts in order, raising the version, and not twice", () => {
  const storage = memoryRecordStorage();
  assertEquals(readMemory(storage), { version: 0, facts: [] });
  assertStrictEquals(rememberFact(storage, "  likes   tea ", LIMITS, T0).kind, "remembered");
  assertStrictEquals(rememberFact(storage, "lives in Oslo", LIMITS, T0 + 1).kind, "remembered");
  assertStrictEquals(rememberFact(storage, "Likes tea", LIMITS, T0 + 2).kind, "already");
  assertEquals(readMemory(storage), {
    version: 2,
    facts: [{ text: "likes tea", at: T0 }, { text: "lives in Oslo", at: T0 + 1 }],
  });
});

Deno.test("rememberFact() refuses a fact over MEMORY_FACT_MAX_CHARS, naming the limit", () => {
  const storage = memoryRecordStorage();
  const result = rememberFact(storage, "x".repeat(21), LIMITS, T0);
  assert(result.kind === "refused");
  assertMatch(result.reason, /at most 20 characters \(MEMORY_FACT_MAX_CHARS\); this one has 21/);
  assertEquals(readMemory(storage).facts, []);
  assertStrictEquals(rememberFact(storage, " ", LIMITS, T0).kind, "refused");
});

Deno.test("rememberFact() refuses a fact that would pass MEMORY_MAX_CHARS, keeping what is held", () => {
  const storage = memoryRecordStorage();
  rememberFact(storage, "a".repeat(20), LIMITS, T0);
  rememberFact(storage, "b".repeat(15), LIMITS, T0);
  const result = rememberFact(storage, "c".repeat(6), LIMITS, T0);
  assert(result.kind === "refused");
  assertMatch(result.reason, /memory is full \(35 of 40 characters used, MEMORY_MAX_CHARS/);
  assertStrictEquals(readMemory(storage).facts.length, 2);
  assertStrictEquals(rememberFact(storage, "c".repeat(5), LIMITS, T0).kind, "remembered");
});

Deno.test("forgetFacts() forgets one fact by its number, or all", () => {
  const storage = memoryRecordStorage();
  for (const fact of ["one", "two", "three"]) rememberFact(storage, fact, LIMITS, T0);
  assertStrictEquals(forgetFacts(storage, 2), 1);
  assertEquals(readMemory(storage).facts.map((f) => f.text), ["one", "three"]);
  assertStrictEquals(forgetFacts(storage, 3), 0);
  assertStrictEquals(forgetFacts(storage, 0), 0);
  assertStrictEquals(forgetFacts(storage, "all"), 2);
  assertEquals(readMemory(storage), { version: 5, facts: [] });
  assertStrictEquals(forgetFacts(storage, "all"), 0);
});

Deno.test("answerMemoryCommand() forgets once per delivery: a redelivered /forget 1 forgets one fact", () => {
  const storage = memoryRecordStorage();
  for (const fact of ["one", "two", "three"]) rememberFact(storage, fact, LIMITS, T0);
  const first = answerMemoryCommand(storage, { kind: "forget", which: 1 }, "d1");
  assertStrictEquals(first, "Forgot #1.");
  assertStrictEquals(answerMemoryCommand(storage, { kind: "forget", which: 1 }, "d1"), first);
  assertEquals(readMemory(storage).facts.map((f) => f.text), ["two", "three"]);
  assertStrictEquals(
    answerMemoryCommand(storage, { kind: "list" }, "d2"),
    memoryListText(readMemory(storage)),
  );
  assertMatch(memoryListText(readMemory(storage)), /1\. two\n2\. three/);
});

Deno.test("memoryCommandOf() takes /memory, /forget, /forget all and /forget N; leaves /forget approvals", () => {
  assertEquals(memoryCommandOf({ command: "memory", argument: "" }), { kind: "list" });
  assertEquals(memoryCommandOf({ command: "forget", argument: "" }), {
    kind: "forget",
    which: "all",
  });
  assertEquals(memoryCommandOf({ command: "forget", argument: "all" }), {
    kind: "forget",
    which: "all",
  });
  assertEquals(memoryCommandOf({ command: "forget", argument: "#3" }), {
    kind: "forget",
    which: 3,
  });
  assertStrictEquals(memoryCommandOf({ command: "forget", argument: "approvals" }), null);
  assertStrictEquals(memoryCommandOf({ command: "status", argument: "" }), null);
  assertStrictEquals(memoryCommandOf(null), null);
});

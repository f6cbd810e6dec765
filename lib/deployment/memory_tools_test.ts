// Unit tests of memory as a turn sees it: the prompt section, the tools bound to one owner, a failed read; Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { memoryRecordStorage } from "../access/_memory_record_storage.ts";
import { readMemory, rememberFact } from "../access/user_memory.ts";
import { memorySection, type MemoryStore, turnMemory } from "./memory_tools.ts";
import type { SessionContext } from "../runtime/mod.ts";

/** A MemoryStore over in-memory records, by owner. */
function mapStore(): MemoryStore & { reads: string[] } {
  const records = new Map<string, ReturnType<typeof memoryRecordStorage>>();
  const of = (owner: string) =>
    records.get(owner) ?? records.set(owner, memoryRecordStorage()).get(owner)!;
  const reads: string[] = [];
  return {
    reads,
    read: (owner) => (reads.push(owner), Promise.resolve(readMemory(of(owner)))),
    remember: (owner, fact) =>
      Promise.resolve(rememberFact(of(owner), fact, { maxChars: 100, factMaxChars: 50 }, 0)),
  };
}

function context(fields: Partial<SessionContext>): SessionContext {
  return {
    platform: "",
    chat_id: "",
    chat_name: "",
    thread_id: "",
    user_id: "",
    user_name: "",
    session_key: "",
    message_id: "",
    job_id: "",
    async_delivery: false,
    ...fields,
  };
}

const run = (tool: { run: (a: never, o: never) => unknown }, args: object) =>
  tool.run(args as never, {} as never);

Deno.test("turnMemory() offers what the user remembered in one chat to their turn in another", async () => {
  const store = mapStore();
  const first = turnMemory(store, context({ platform: "telegram", user_id: "7" }), false);
  assertStrictEquals(await first.section, "");
  assertStrictEquals(await run(first.tools[0], { fact: "likes tea" }), "Remembered.");
  const later = turnMemory(
    store,
    context({ platform: "telegram", user_id: "7", chat_id: "x" }),
    false,
  );
  assertMatch(await later.section, /^What you remember about this user.*\n- likes tea$/);
  assertStrictEquals(await run(later.tools[1], {}), "1. likes tea");
  const other = turnMemory(store, context({ platform: "telegram", user_id: "8" }), false);
  assertStrictEquals(await other.section, "");
});

Deno.test("turnMemory() in a group chat reads nothing and its tools say why", async () => {
  const store = mapStore();
  const group = turnMemory(store, context({ platform: "telegram", user_id: "7" }), true);
  assertStrictEquals(await group.section, "");
  assertEquals(store.reads, []);
  assertMatch(String(await run(group.tools[0], { fact: "x" })), /direct chats only/);
});

Deno.test("turnMemory() goes on without memory when the read fails", async () => {
  const store: MemoryStore = {
    read: () => Promise.reject(new Error("object unreachable")),
    remember: () => Promise.reject(new Error("unused")),
  };
  const memo = turnMemory(store, context({ platform: "telegram", user_id: "7" }), false);
  assertStrictEquals(await memo.section, "");
});

Deno.test("memorySection() is empty for an empty memory", () => {
  assertStrictEquals(memorySection({ version: 0, facts: [] }), "");
});

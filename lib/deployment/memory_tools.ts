// Memory across chats as a turn sees it: the store it is injected with, the `remember` and `recall` tools, the system-prompt section; runtime-neutral.
import { defineTool, type Tool } from "../agent/mod.ts";
import { type MemoryOwner, memoryOwner } from "../access/memory_owner.ts";
import { errorText, log, type SessionContext } from "../runtime/mod.ts";
import type { RememberResult, UserMemory } from "../access/user_memory.ts";

/** The names of the memory tools (offered with `MEMORY=on`). */
export const MEMORY_TOOL_NAMES = ["remember", "recall"] as const;

/**
 * Where users' memories live, by owner object name (lib/access/memory_owner.ts): in a Worker, the
 * access objects over RPC (functions/_memory_store.ts); in tests, a map.
 */
export interface MemoryStore {
  /** The owner's memory (empty when none). */
  read(owner: string): Promise<UserMemory>;
  /** Stores one fact under the caps (lib/access/user_memory.ts `rememberFact`). */
  remember(owner: string, fact: string): Promise<RememberResult>;
}

/** The system-prompt section offering `memory` to the model, or "" when nothing is remembered. */
export function memorySection(memory: UserMemory): string {
  if (!memory.facts.length) return "";
  return [
    "What you remember about this user (from earlier chats; stored with the remember tool):",
    ...memory.facts.map((fact) => `- ${fact.text}`),
  ].join("\n");
}

/**
 * A turn's memory: its `remember` and `recall`, and the system section of what is remembered
 * (read once, from the user's own record; "" when nothing is, or the turn has no owner). A read
 * that fails leaves the section empty, logged: memory is context, not worth failing a turn for.
 */
export function turnMemory(
  store: MemoryStore,
  context: SessionContext,
  group: boolean,
): { tools: Tool[]; section: Promise<string> } {
  const owner = memoryOwner(context, group);
  const section = "object" in owner
    ? store.read(owner.object).then(memorySection, (error) => {
      log.warn("memory: the user's memory was not read", { error: errorText(error) });
      return "";
    })
    : Promise.resolve("");
  return { tools: memoryTools(store, owner), section };
}

/**
 * The turn's `remember` and `recall`, bound to its memory owner (or answering why there is none:
 * a group chat, an API request without `user`). The model is told of a refused fact as the
 * tool's result, with the limit it passed.
 */
export function memoryTools(store: MemoryStore, owner: MemoryOwner): Tool[] {
  const remember = defineTool<{ fact: string }>({
    name: "remember",
    description: "Store one short fact about the user (a preference, a name, an ongoing " +
      "project) to be remembered in their later chats. Only what the user would want kept.",
    parameters: {
      type: "object",
      properties: { fact: { type: "string", description: "the fact, one short sentence" } },
      required: ["fact"],
      additionalProperties: false,
    },
    async run({ fact }) {
      if ("none" in owner) return owner.none;
      const result = await store.remember(owner.object, String(fact ?? ""));
      if (result.kind === "refused") return result.reason;
      return result.kind === "already" ? "Already remembered." : "Remembered.";
    },
  });
  const recall = defineTool({
    name: "recall",
    description: "Read back every fact remembered about the user, numbered.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async run() {
      if ("none" in owner) return owner.none;
      const { facts } = await store.read(owner.object);
      return facts.length
        ? facts.map((fact, i) => `${i + 1}. ${fact.text}`).join("\n")
        : "Nothing is remembered about this user.";
    },
  });
  return [remember, recall];
}

// One user's memory across chats (short facts the model stored with `remember`), kept in the user's own access record; runtime-neutral.
import type { RecordStorage } from "./record_storage.ts";

/** One remembered fact. */
export interface MemoryFact {
  text: string;
  /** When it was remembered (ms). */
  at: number;
}

/**
 * A user's memory as it is read: its facts, oldest first (the numbers `/memory` shows are their
 * positions, from 1), and a version that every change raises (0: never written).
 */
export interface UserMemory {
  version: number;
  facts: MemoryFact[];
}

/** The caps of one user's memory (`MEMORY_MAX_CHARS`, `MEMORY_FACT_MAX_CHARS`). */
export interface MemoryLimits {
  /** All facts' characters together, at most. */
  maxChars: number;
  /** One fact's characters, at most. */
  factMaxChars: number;
}

/** What `rememberFact` did: stored, already there, or refused with the reason the model is told. */
export type RememberResult =
  | { kind: "remembered" | "already"; memory: UserMemory }
  | { kind: "refused"; reason: string };

/** A command answered from the memory (`/memory`, `/forget`, `/forget N`). */
export type MemoryCommand = { kind: "list" } | { kind: "forget"; which: number | "all" };

/** How many answered commands a record keeps, so a redelivered `/forget 2` forgets once. */
const _COMMANDS_KEPT = 20;

const _EMPTY: UserMemory = { version: 0, facts: [] };

/** The memory kept in `storage` (empty when none). */
export function readMemory(storage: RecordStorage): UserMemory {
  return storage.get<UserMemory>("memory") ?? _EMPTY;
}

/** Characters all of `memory`'s facts hold together (what `MEMORY_MAX_CHARS` caps). */
export function memoryChars(memory: UserMemory): number {
  return memory.facts.reduce((sum, fact) => sum + fact.text.length, 0);
}

/**
 * Stores one fact, whitespace collapsed, unless it is empty, longer than `factMaxChars`, or would
 * take the memory past `maxChars`: then nothing changes and the reason says which limit, so the
 * model can tell the user. A fact already held (any case) is not stored twice.
 */
export function rememberFact(
  storage: RecordStorage,
  fact: string,
  limits: MemoryLimits,
  now: number,
): RememberResult {
  const text = fact.replace(/\s+/g, " ").trim();
  if (!text) return { kind: "refused", reason: "Not remembered: the fact is empty." };
  if (text.length > limits.factMaxChars) {
    return {
      kind: "refused",
      reason: `Not remembered: a fact may be at most ${limits.factMaxChars} characters ` +
        `(MEMORY_FACT_MAX_CHARS); this one has ${text.length}. Store a shorter fact.`,
    };
  }
  const memory = readMemory(storage);
  if (memory.facts.some((f) => f.text.toLowerCase() === text.toLowerCase())) {
    return { kind: "already", memory };
  }
  const used = memoryChars(memory);
  if (used + text.length > limits.maxChars) {
    return {
      kind: "refused",
      reason: `Not remembered: the memory is full (${used} of ${limits.maxChars} characters ` +
        `used, MEMORY_MAX_CHARS; this fact needs ${text.length}). The user can /forget facts.`,
    };
  }
  const next = { version: memory.version + 1, facts: [...memory.facts, { text, at: now }] };
  storage.put("memory", next);
  return { kind: "remembered", memory: next };
}

/**
 * Forgets fact number `which` (from 1, as `/memory` lists them) or every fact; the number of facts
 * forgotten (0: no such fact, or nothing held).
 */
export function forgetFacts(storage: RecordStorage, which: number | "all"): number {
  const memory = readMemory(storage);
  if (which === "all") {
    if (!memory.facts.length) return 0;
    storage.put("memory", { version: memory.version + 1, facts: [] });
    return memory.facts.length;
  }
  if (!Number.isInteger(which) || which < 1 || which > memory.facts.length) return 0;
  const facts = memory.facts.filter((_, i) => i !== which - 1);
  storage.put("memory", { version: memory.version + 1, facts });
  return 1;
}

/**
 * Answers a memory command once per delivery: a redelivered `/forget 2` (same `deliveryKey`)
 * gets the first answer back and forgets nothing more. The record keeps the newest answers.
 */
export function answerMemoryCommand(
  storage: RecordStorage,
  command: MemoryCommand,
  deliveryKey: string,
): string {
  const answered = storage.get<{ key: string; answer: string }[]>("memory_commands") ?? [];
  const before = answered.find((a) => a.key === deliveryKey);
  if (before) return before.answer;
  const answer = command.kind === "list"
    ? memoryListText(readMemory(storage))
    : forgottenText(command.which, forgetFacts(storage, command.which));
  if (command.kind === "forget") {
    storage.put(
      "memory_commands",
      [...answered, { key: deliveryKey, answer }].slice(-_COMMANDS_KEPT),
    );
  }
  return answer;
}

/**
 * The memory command in a `/memory` or `/forget` line (`argument` as parsed, lower case), or null:
 * `/forget approvals` is the session's, and anything else is not a memory command.
 */
export function memoryCommandOf(
  command: { command: string; argument: string } | null,
): MemoryCommand | null {
  if (command?.command === "memory") return { kind: "list" };
  if (command?.command !== "forget") return null;
  const argument = command.argument.replace(/^#/, "");
  if (argument === "" || argument === "all") return { kind: "forget", which: "all" };
  return /^\d{1,4}$/.test(argument) ? { kind: "forget", which: Number(argument) } : null;
}

/** The answer to `/memory`: every fact, numbered for `/forget N`. */
export function memoryListText(memory: UserMemory): string {
  if (!memory.facts.length) return "I remember nothing about you.";
  return [
    "What I remember about you:",
    ...memory.facts.map((fact, i) => `${i + 1}. ${fact.text}`),
    "/forget N forgets one, /forget all forgets everything.",
  ].join("\n");
}

/** The answer to `/forget` (`which` all) or `/forget N`, `count` facts forgotten. */
export function forgottenText(which: number | "all", count: number): string {
  if (which === "all") {
    return count
      ? `Forgot everything I remembered about you (${count}).`
      : "I remember nothing about you.";
  }
  return count ? `Forgot #${which}.` : `No fact #${which}; /memory lists them.`;
}

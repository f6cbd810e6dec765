// Compaction of a long conversation: what a turn would send measured against CONTEXT_TOKENS, the oldest turns summarised by the model under the claim, the history a turn sees; runtime-neutral.
import { type ChatMessage, messageText } from "../agent/mod.ts";
import { errorText, log } from "../runtime/mod.ts";
import type { Claim } from "./claim.ts";
import { type Compaction, CompactionStore } from "./compaction.ts";
import type { SessionStores } from "./session_stores.ts";
import type { WindowEntry } from "./transcript.ts";

/** One request for a summary: the prompt, the model the session's turns use, the turn's signal. */
export interface SummaryRequest {
  system: string;
  input: string;
  /** The session's model (`/model`, an API request's `model`); absent: the deployment's. */
  model?: string;
  signal: AbortSignal;
}

/** Asks the model for a summary (lib/deployment/summarizer.ts); rejects as a model call does. */
export type Summarizer = (request: SummaryRequest) => Promise<string>;

/** Compaction's settings: `CONTEXT_TOKENS` (null: off) and the model that writes summaries. */
export interface CompactionOptions {
  contextTokens: number | null;
  summarize: Summarizer;
}

/** How a compaction is asked for: by size (`auto`), or of everything before the turn (`all`). */
export type CompactionMode = "auto" | "all";

/** What the model is told to write; the summary replaces the messages in every later turn. */
export const SUMMARY_PROMPT = [
  "You compact a conversation between a user and an AI assistant so that it can go on without",
  "its older messages: your summary is all the assistant will see of them.",
  "Keep: facts about the user and their situation; names, numbers, ids, dates, links and file",
  "names; decisions made and why; what tools returned that still matters; open tasks, promises",
  "and unanswered questions (what the assistant still has to do). Drop greetings and chatter.",
  "Merge the earlier summary, if any, with the new messages into one summary.",
  "Write terse notes in the conversation's language, no preamble, at most 400 words.",
].join("\n");

/** The label a summary carries in the history a turn sends. */
export const SUMMARY_LABEL = "Summary of the earlier conversation (its messages are compacted):";

/** The longest summary kept: a model that ignores the word limit cannot fill the context with it. */
const _SUMMARY_MAX_CHARS = 16_000;

/** Characters per token in the estimate of what is new (no tokenizer in the bundle). */
const _CHARS_PER_TOKEN = 4;

/** The newest turns kept as they are after an automatic compaction: half the context, at most. */
const _KEEP_SHARE = 0.5;

/** What the summary prompt may hold of the messages: three quarters of the context. */
const _INPUT_SHARE = 0.75;

/** A turn's history and what became of compaction on the way. */
export interface CompactedHistory {
  history: ChatMessage[];
  /** Messages summarised now (0: none). */
  compacted: number;
  /** Why nothing was compacted when the mode asked for it. */
  skipped?: "off" | "nothing" | "failed";
}

/**
 * Measures a session's context and compacts its current conversation: a step of the session's own
 * records, run under the claim before the model call that needs it. The summary call happens with
 * nothing written; the summary and the range it covers are then stored in one transaction, only
 * while the claim is held and only if no other compaction covered the range meanwhile — a kill
 * during the call leaves the transcript as it was, and the next attempt runs the step again.
 */
export class Compactor {
  readonly #stores: SessionStores;
  readonly #store: CompactionStore;
  readonly #options: CompactionOptions | null;
  readonly #historyWindow: number;
  readonly #now: () => number;

  constructor(
    stores: SessionStores,
    options: CompactionOptions | undefined,
    historyWindow: number,
    now: () => number,
  ) {
    this.#stores = stores;
    this.#store = new CompactionStore(stores.db);
    this.#options = options ?? null;
    this.#historyWindow = historyWindow;
    this.#now = now;
  }

  /** The compactions table (the inspector's and the API's read). */
  get store(): CompactionStore {
    return this.#store;
  }

  /** Whether compaction is on (`CONTEXT_TOKENS` set and a summarizer given). */
  get on(): boolean {
    return this.#options?.contextTokens != null;
  }

  /** `CONTEXT_TOKENS`, or null when compaction is off. */
  get limit(): number | null {
    return this.#options?.contextTokens ?? null;
  }

  /**
   * The estimated size in tokens of what a turn of `conversation` sends (input aside): the last
   * model call's own count plus a quarter token per character newer than it, or the whole
   * window's characters when there is no count since the last compaction.
   */
  contextSize(conversation: number, input = ""): number {
    const latest = this.#store.latest(conversation);
    return this.#estimate(conversation, latest, this.#entries(conversation, latest), input);
  }

  /**
   * The history a turn of `claim` sends (the newest summary, then the window after it), after
   * compacting the oldest turns when the estimate exceeds `CONTEXT_TOKENS` (`auto`) or at once
   * (`all`: /compact, a context overflow). A failed summary call leaves the history whole.
   */
  async history(
    claim: Claim,
    input: string,
    signal: AbortSignal,
    mode: CompactionMode = "auto",
    model?: string,
  ): Promise<CompactedHistory> {
    const { conversation } = claim;
    const latest = this.#store.latest(conversation);
    const entries = this.#entries(conversation, latest);
    const whole = { history: _history(latest, entries), compacted: 0 };
    const limit = this.#options?.contextTokens;
    if (!this.#options || limit == null) return { ...whole, skipped: "off" };
    if (mode === "auto" && this.#estimate(conversation, latest, entries, input) <= limit) {
      return whole;
    }
    const keep = mode === "all" ? entries.length : _keptFrom(entries, limit * _KEEP_SHARE);
    const older = entries.slice(0, keep);
    if (!older.length) return { ...whole, skipped: "nothing" };
    const range = {
      conversation,
      fromId: latest?.throughId ?? 0,
      throughId: older[older.length - 1].id,
    };
    let summary: string;
    try {
      const text = await this.#options.summarize({
        system: SUMMARY_PROMPT,
        input: _summaryInput(latest, older, Math.floor(limit * _INPUT_SHARE * _CHARS_PER_TOKEN)),
        ...(model ? { model } : {}),
        signal,
      });
      summary = text.trim().slice(0, _SUMMARY_MAX_CHARS);
      if (!summary) throw new Error("the model wrote an empty summary");
    } catch (error) {
      // A stop or the turn's timeout: the turn that follows ends at once on the same signal.
      if (signal.aborted) return { ...whole, skipped: "failed" };
      log.warn("compaction failed; the turn goes on uncompacted", { error: errorText(error) });
      return { ...whole, skipped: "failed" };
    }
    const { db, claims } = this.#stores;
    const stored = db.transaction((tx) =>
      claims.holds(claim) && this.#store.add(tx, { ...range, summary }, claim.seq, this.#now())
    );
    if (!stored) return whole; // stopped, or compacted by another attempt: what is stored stands
    const now = this.#store.latest(conversation);
    log.info("conversation compacted", { messages: now?.messages ?? 0, seq: claim.seq });
    return {
      history: _history(now, entries.slice(keep)),
      compacted: now?.messages ?? older.length,
    };
  }

  /**
   * Remembers the context size the turn's last model call reported, once its messages are stored.
   * Only while compaction is on: the row is a write every turn, and with CONTEXT_TOKENS off only
   * /status reads it (it estimates from the transcript without).
   */
  measure(tx: Parameters<CompactionStore["measure"]>[0], conversation: number, tokens: number) {
    if (tokens > 0 && this.on) this.#store.measure(tx, conversation, tokens);
  }

  #entries(conversation: number, latest: Compaction | null): WindowEntry[] {
    const window = this.#historyWindow;
    return this.#stores.transcript.windowEntries(conversation, window, latest?.throughId ?? 0);
  }

  #estimate(
    conversation: number,
    latest: Compaction | null,
    entries: WindowEntry[],
    input: string,
  ): number {
    const measured = this.#store.measured(conversation);
    const newer = measured ? entries.filter((e) => e.id > measured.throughId) : entries;
    const chars = newer.reduce((sum, e) => sum + e.chars, input.length) +
      (measured ? 0 : (latest?.summary.length ?? 0));
    return (measured?.tokens ?? 0) + Math.ceil(chars / _CHARS_PER_TOKEN);
  }
}

/**
 * Wraps a turn's event recorder to keep the context size its last model call reported (prompt
 * plus completion tokens: the completion is the newest message of the next call's prompt).
 */
export function contextMeter(
  emit: (type: string, data: Record<string, unknown>) => void,
): { emit: typeof emit; tokens: () => number } {
  let tokens = 0;
  return {
    emit: (type, data) => {
      if (type === "model.completed") {
        const prompt = Number(data.prompt_tokens) || 0;
        const completion = Number(data.completion_tokens) || 0;
        tokens = prompt + completion;
      }
      emit(type, data);
    },
    tokens: () => tokens,
  };
}

/** The history a turn sends: the summary (when there is one) as a system message, then `entries`. */
function _history(latest: Compaction | null, entries: WindowEntry[]): ChatMessage[] {
  const messages = entries.map((entry) => entry.message);
  if (!latest) return messages;
  return [{ role: "system", content: `${SUMMARY_LABEL}\n${latest.summary}` }, ...messages];
}

/**
 * Where the kept newest turns start in `entries`: as many whole turns (each from its user
 * message) as fit in `budget` tokens, newest first, but no more than the newer half;
 * entries.length when none fits.
 */
function _keptFrom(entries: WindowEntry[], budget: number): number {
  let start = entries.length;
  let chars = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    chars += entries[i].chars;
    if (chars / _CHARS_PER_TOKEN > budget) break;
    if (entries[i].message.role === "user") start = i;
  }
  // At least the older half goes, whatever the characters say: the model's own count (a long
  // system prompt, many tools) may be over the limit while the messages look small.
  const half = entries.findIndex((e, i) => i >= entries.length / 2 && e.message.role === "user");
  const target = half >= 0 ? half : entries.findLastIndex((e) => e.message.role === "user");
  return Math.max(start, target);
}

/** The summary prompt's input: the earlier summary, then each message as a line, within `budget` characters. */
function _summaryInput(latest: Compaction | null, older: WindowEntry[], budget: number): string {
  const each = Math.max(200, Math.min(4_000, Math.floor(budget / Math.max(1, older.length))));
  const lines = older.map(({ message }) => _line(message, each));
  return [
    ...(latest ? ["Earlier summary:", latest.summary, ""] : []),
    "Messages to compact:",
    ...lines,
  ].join("\n");
}

/** One message as the summary prompt shows it: role, text, tool calls, each cut at `max` characters. */
function _line(message: ChatMessage, max: number): string {
  const cut = (text: string) => (text.length > max ? `${text.slice(0, max)}…` : text);
  const text = messageText(message);
  if (message.role === "assistant" && message.tool_calls?.length) {
    const calls = message.tool_calls.map((call) =>
      call.type === "function" ? `${call.function.name}(${call.function.arguments})` : call.type
    );
    return `assistant${text ? `: ${cut(text)}` : ""} [called ${cut(calls.join(", "))}]`;
  }
  if (message.role === "tool") return `tool result: ${cut(text)}`;
  return `${message.role}: ${cut(text)}`;
}

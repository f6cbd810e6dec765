// A claimed turn with compaction around it: the history compacted first when it is too long, a context overflow compacted and run once more, and /compact as a turn of its own; runtime-neutral.
import { compactText, parseCommand } from "../chat/mod.ts";
import type { Claim } from "./claim.ts";
import type { Compactor } from "./compactor.ts";
import { type ClaimedTurnResult, CONTEXT_OVERFLOW } from "./run_claimed_turn.ts";
import type { ChatMessage } from "../agent/mod.ts";
import type { InboundMessage, TurnProgress } from "./types.ts";

/**
 * Whether `message` is a chat's `/compact`: queued like a message, run as a compaction. Its text
 * is asked too: a /compact merged with other text (`BUSY_INPUT_MODE=merge`) is an ordinary turn.
 */
export function isCompactRequest(message: InboundMessage): boolean {
  return message.command?.command === "compact" &&
    parseCommand(message.text)?.command === "compact";
}

/**
 * Runs `run` on the turn's history, compacted first where it exceeds `CONTEXT_TOKENS`. A model
 * answer that the context is too long compacts everything before the turn and runs it once more
 * — only when its first model call failed so (no tool of the turn ran: none runs twice) and the
 * turn is not a resumption; a second overflow is the turn's failure, the user is told, the
 * session goes on. A `/compact` compacts at once and answers with what it did.
 */
export async function runCompactedTurn(
  compactor: Compactor,
  claim: Claim,
  message: InboundMessage,
  progress: TurnProgress,
  signal: AbortSignal,
  run: (history: ChatMessage[]) => Promise<ClaimedTurnResult>,
  options: { resumed: boolean; model?: string },
): Promise<ClaimedTurnResult> {
  const { model } = options;
  if (isCompactRequest(message)) {
    const done = await compactor.history(claim, "", signal, "all", model);
    const reply = compactText(done.compacted, done.skipped);
    const usage = { prompt_tokens: 0, completion_tokens: 0 };
    return { outcome: { status: "completed", reply, usage }, messages: [] };
  }
  const first = await compactor.history(claim, message.text, signal, "auto", model);
  const result = await run(first.history);
  const { outcome } = result;
  const overflow = outcome.status === "failed" && outcome.error.type === CONTEXT_OVERFLOW;
  if (!overflow || options.resumed || progress.step > 1 || !compactor.on) return result;
  const again = await compactor.history(claim, message.text, signal, "all", model);
  if (!again.compacted) return result;
  // A fresh start: the failed attempt's messages are not this one's.
  progress.step = 0;
  progress.messages.length = 0;
  return await run(again.history);
}

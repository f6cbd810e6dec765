// Runs one claimed message through the executor: the abort and timeout, the outcome, the messages to keep; runtime-neutral.
import { type ChatMessage, ModelError, type PendingCall } from "../agent/mod.ts";
import { turnFiles } from "../agent/tool_files.ts";
import { deadlineSignal } from "../runtime/deadline.ts";
import { abortable } from "./abortable.ts";
import { interruptedTurn } from "./interrupted_turn.ts";
import type {
  InboundMessage,
  TurnApprovals,
  TurnExecutor,
  TurnOutcome,
  TurnProgress,
  TurnUsage,
} from "./types.ts";

/** A failed outcome's `error.type` when the model said the context is too long. */
export const CONTEXT_OVERFLOW = "context_length_exceeded";

/** Its message, as the user reads it in the failure notice. */
export const CONTEXT_OVERFLOW_MESSAGE =
  "the conversation is too long for the model, even after compacting it; /new starts a fresh one";

/** What ran: its outcome and the messages to append to the transcript, or the pause it stopped at. */
export interface ClaimedTurnResult {
  outcome: TurnOutcome;
  messages: ChatMessage[];
  /** The turn paused for approval: nothing is appended yet; these are the executor's own messages. */
  paused?: { calls: PendingCall[]; messages: ChatMessage[]; step: number; usage: TurnUsage };
}

/**
 * Runs `message` with `history` (or its seed when the conversation is empty). A stop aborts
 * `controller`: the race frees the caller at once even if the executor ignores its signal. Partial
 * work is kept (marked) only when the turn timed out; a stop wrote its own record.
 */
export async function runClaimedTurn(
  execute: TurnExecutor,
  message: InboundMessage,
  history: ChatMessage[],
  progress: TurnProgress,
  controller: AbortController,
  turnTimeoutMs: number,
  approvals?: TurnApprovals,
): Promise<ClaimedTurnResult> {
  const seed = history.length === 0 ? (message.seed ?? []) : [];
  // Cleared as the turn ends: a busy session object may only have so many active timers.
  const deadline = deadlineSignal(turnTimeoutMs, controller.signal);
  const { signal } = deadline;
  try {
    const result = await abortable(
      execute(message, seed.length ? seed : history, signal, progress, approvals),
      signal,
    );
    if (result.paused?.length) {
      const { messages, usage } = result;
      const paused = { calls: result.paused, messages, step: result.steps ?? 0, usage };
      return { outcome: { status: "completed", reply: "", usage }, messages: [], paused };
    }
    // References only (id, type, size, name): an API caller is given links to them.
    const files = turnFiles(result.messages);
    return {
      outcome: {
        status: "completed",
        reply: result.reply,
        usage: result.usage,
        ...(result.toolCalls?.length ? { toolCalls: result.toolCalls } : {}),
        ...(result.truncated ? { truncated: true } : {}),
        ...(files.length ? { files } : {}),
      },
      messages: [...seed, ...result.messages],
    };
  } catch (error) {
    const failure = _describeFailure(error, signal);
    const outcome: TurnOutcome = { status: "failed", error: failure };
    return {
      outcome,
      messages: failure.type === "turn_timeout"
        ? interruptedTurn(progress.messages, failure.message)
        : [],
    };
  } finally {
    deadline.clear();
  }
}

function _describeFailure(error: unknown, signal: AbortSignal): { message: string; type: string } {
  // A stop aborts with Error("turn …"); any other abort is the timeout.
  if (signal.aborted && !(signal.reason instanceof Error && /^turn /.test(signal.reason.message))) {
    return { message: "the turn timed out", type: "turn_timeout" };
  }
  if (error instanceof ModelError && error.contextOverflow) {
    // The runner compacts and runs the turn once more (turn_runner.ts); then the user is told.
    return { message: CONTEXT_OVERFLOW_MESSAGE, type: CONTEXT_OVERFLOW };
  }
  if (error instanceof ModelError) {
    return { message: `model call failed: ${error.message}`, type: "model_error" };
  }
  return { message: "the turn failed", type: "turn_error" };
}

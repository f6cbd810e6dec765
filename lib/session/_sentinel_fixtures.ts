// Test support for the SessionSentinel tests: options, a message, an executor that records and can hold turns; Deno (tests only).
import type { ChatMessage } from "../agent/mod.ts";
import type { InDoubt, ReplyChannel } from "../chat/mod.ts";
import type { InboundMessage, SentinelOptions, TurnExecutor } from "./mod.ts";

/**
 * The timeline of a chat turn that calls one tool and then answers in one part, as the inspector
 * shows it (the sentinel's unit tests and the end-to-end inspect test expect the same).
 */
export const ONE_TOOL_TURN_EVENTS: readonly string[] = [
  "run.started",
  "model.completed",
  "tool.started",
  "tool.completed",
  "model.completed",
  "reply.sent",
  "run.completed",
];

/** Sentinel options for unit tests: no channel, generous timeouts. */
export const options: SentinelOptions = {
  historyWindow: 40,
  turnTimeoutMs: 60_000,
  leaseMs: 30_000,
  maxAttempts: 3,
  drainBudgetMs: 300_000,
};

/** A message of session test:1, with an optional delivery key. */
export const msg = (text: string, deliveryKey?: string): InboundMessage => ({
  text,
  deliveryKey,
  context: { session_key: "test:1" },
});

/** A held turn: it ends once `resolve` is called. (No Promise.withResolvers: tsc targets es2023.) */
interface _Hold {
  promise: Promise<void>;
  resolve: () => void;
}

/** An executor that records concurrency and can be held per message. */
export function recordingExecutor() {
  const state = { running: 0, peak: 0, order: [] as string[], histories: [] as ChatMessage[][] };
  const holds = new Map<string, _Hold>();
  const execute: TurnExecutor = async (message, history) => {
    state.running++;
    state.peak = Math.max(state.peak, state.running);
    state.order.push(message.text);
    state.histories.push(history);
    try {
      await new Promise((r) => setTimeout(r, 1));
      await holds.get(message.text)?.promise;
      return {
        reply: `re: ${message.text}`,
        messages: [{ role: "user", content: message.text }, {
          role: "assistant",
          content: `re: ${message.text}`,
        }],
        usage: { prompt_tokens: 0, completion_tokens: 0 },
      };
    } finally {
      state.running--;
    }
  };
  const hold = (text: string): _Hold => {
    let resolve = () => {};
    const promise = new Promise<void>((r) => resolve = r);
    const h = { promise, resolve };
    holds.set(text, h);
    return h;
  };
  return { state, execute, hold };
}

/**
 * A reply channel that sends every text as one part and records it in `sent`; a part in doubt is
 * resolved as `inDoubt` says (default: resent behind the note, as on Telegram).
 */
export function recordingChannel(sent: string[], inDoubt: InDoubt = "resend_marked"): ReplyChannel {
  return {
    split: (_target, text) => [text],
    send: (_target, text, part) => {
      part.leaving?.();
      sent.push(text);
      return Promise.resolve({ ok: true });
    },
    inDoubt: () => Promise.resolve(inDoubt),
  };
}

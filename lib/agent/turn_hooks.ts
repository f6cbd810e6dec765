// The deployment's turn hooks (turnStart, turnEnd, messageReceived, toolCall), their argument types, and the one time-boxed caller that never lets a hook break a turn; any runtime with node:async_hooks.
import { errorText, log } from "../runtime/mod.ts";

/** How long a hook may run by default (`HOOK_TIMEOUT_MS`) before the turn goes on without it. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;

/** The turn a hook is told about: who wrote, where, in which session, and the run's seq there. */
export interface HookContext {
  platform: string;
  chat_id: string;
  user_id: string;
  session_key: string;
  /** The run's seq in its session (the `seq` of logs and run ids); 0 before the message is stored. */
  seq: number;
  /** Set for a scheduled job's turn. */
  job_id?: string;
}

/** `turnStart`: a turn starts (again after a restart: see `TurnHooks`). */
export interface TurnStartEvent extends HookContext {
  /** The user's message text (empty for a turn that continues on tool results). */
  text: string;
}

/** `turnEnd`: a turn ended, with how and what it cost. */
export interface TurnEndEvent extends HookContext {
  outcome:
    | { status: "completed"; reply: string }
    | { status: "failed"; error: { message: string; type: string } };
  /** Token counts of a completed turn; zero for one that failed. */
  usage: { prompt_tokens: number; completion_tokens: number };
}

/** `messageReceived`: a message arrived and is about to be stored (nothing is stored yet). */
export interface MessageReceivedEvent extends HookContext {
  /** Where it came from: a chat platform's name, "api" (OpenAI pipeline). */
  source: string;
  text: string;
}

/** `toolCall`: the model called one of baton's tools, which is about to run. */
export interface ToolCallEvent extends HookContext {
  tool: string;
  call_id: string;
  /** The call's arguments, parsed. */
  arguments: Record<string, unknown>;
}

/** What `messageReceived` may answer: false or `{ drop: true }` drops the message. */
export type MessageVerdict = void | boolean | { drop?: boolean };

/** What `toolCall` may answer: `{ deny: "reason" }` refuses the call (the model is told the reason). */
export type ToolCallVerdict = void | { deny?: string };

/**
 * A deployment's hooks. Each is awaited at most `HOOK_TIMEOUT_MS`; one that throws, rejects or
 * takes longer is logged and ignored (its verdict too): a hook never breaks a turn or the
 * once-only guarantees. `turnStart` runs as each attempt of a turn starts (at least once per
 * turn: an attempt a restart cut off starts again; not again when a turn resumes after an
 * approval); `turnEnd` runs once the turn's end is stored (at most once: a restart in between
 * loses it — `EVENTS_WEBHOOK_URL` is the durable record).
 */
export interface TurnHooks {
  turnStart?: (event: TurnStartEvent) => void | Promise<void>;
  turnEnd?: (event: TurnEndEvent) => void | Promise<void>;
  /** Before a message is stored: false or `{ drop: true }` drops it (nothing stored, no turn). */
  messageReceived?: (event: MessageReceivedEvent) => MessageVerdict | Promise<MessageVerdict>;
  /** Before a baton tool call runs: `{ deny: "reason" }` refuses it. */
  toolCall?: (event: ToolCallEvent) => ToolCallVerdict | Promise<ToolCallVerdict>;
}

/** The hooks and their time box, as a consumer of them is given. */
export interface HookOptions {
  hooks?: TurnHooks;
  /** Default `DEFAULT_HOOK_TIMEOUT_MS`. */
  hookTimeoutMs?: number;
}

/**
 * Calls hook `name` with `event`, within `timeoutMs`: its answer, or undefined when there is no
 * such hook or it threw, rejected or hung (logged by name, with the error's text and never the
 * event: it may carry a user's words). Never rejects.
 */
export async function callHook<K extends keyof TurnHooks>(
  options: HookOptions,
  name: K,
  event: Parameters<NonNullable<TurnHooks[K]>>[0],
): Promise<Awaited<ReturnType<NonNullable<TurnHooks[K]>>> | undefined> {
  const hook = options.hooks?.[name] as
    | ((event: unknown) => unknown)
    | undefined;
  if (!hook) return undefined;
  const timeoutMs = options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((
    resolve,
  ) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
  try {
    // A hook that throws synchronously is caught the same as one that rejects.
    const answer = await Promise.race([Promise.resolve().then(() => hook(event)), late]);
    if (answer === "late") {
      log.warn("hook timed out", { hook: name, timeout_ms: timeoutMs });
      return undefined;
    }
    return answer as Awaited<ReturnType<NonNullable<TurnHooks[K]>>>;
  } catch (error) {
    log.error("hook failed", { hook: name, error: errorText(error).slice(0, 300) });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a `messageReceived` answer drops the message. */
export function dropsMessage(verdict: MessageVerdict | undefined): boolean {
  return verdict === false || (typeof verdict === "object" && verdict?.drop === true);
}

/** The hook context of a turn's context fields and seq. */
export function hookContext(
  context: {
    platform?: string;
    chat_id?: string;
    user_id?: string;
    session_key?: string;
    job_id?: string;
  },
  seq: number,
): HookContext {
  return {
    platform: context.platform ?? "",
    chat_id: context.chat_id ?? "",
    user_id: context.user_id ?? "",
    session_key: context.session_key ?? "",
    seq,
    ...(context.job_id ? { job_id: context.job_id } : {}),
  };
}

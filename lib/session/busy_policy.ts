// What a session does with a new message given its state: queue, interrupt, merge or refuse, and whether to notify; runtime-neutral, pure.
import type { BusyMode } from "./types.ts";

/** The session as the policy sees it. */
export interface BusyState {
  /** A turn holds the session. */
  running: boolean;
  /** Messages waiting (queued or merged). */
  waiting: number;
  /** A queued message exists that a merge could join. */
  mergeTarget: boolean;
}

/** The deployment's rules. */
export interface BusyRules {
  mode: BusyMode;
  maxQueued: number;
}

/** What to do with the message, and whether its sender may get the queued notice. */
export type BusyDecision =
  | { action: "queue"; notify: boolean }
  /** Queue it and end the running turn. */
  | { action: "interrupt"; notify: false }
  /** Fold it into the newest queued message. */
  | { action: "merge"; notify: boolean }
  /** Queue it offered to the running turn, which takes it at its next step (lib/session/steers.ts). */
  | { action: "steer"; notify: false }
  /** Not stored: too many messages wait. */
  | { action: "refuse"; notify: true };

/**
 * The busy-input decision. A run that records events is never merged (it has its own run id);
 * `notify` means "busy, so the sender may hear it waits" — the 30 s debounce is the caller's.
 * `steer` (a `/steer`) steers in any mode; a steer waits like any message until taken, so the
 * queue's cap counts it.
 */
export function decideBusy(
  state: BusyState,
  rules: BusyRules,
  recordsEvents: boolean,
  steer = false,
): BusyDecision {
  const busy = state.running || state.waiting > 0;
  const merges = rules.mode === "merge" && !recordsEvents && !steer;
  if (busy && merges && state.running && state.mergeTarget) {
    return { action: "merge", notify: true };
  }
  if (state.waiting >= rules.maxQueued) return { action: "refuse", notify: true };
  const steers = steer || (rules.mode === "steer" && !recordsEvents);
  if (steers && state.running) return { action: "steer", notify: false };
  if (busy && rules.mode === "interrupt" && state.running) {
    return { action: "interrupt", notify: false };
  }
  return { action: "queue", notify: busy };
}

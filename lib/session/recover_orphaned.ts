// Recovers the claim a dead executor left: rerun, resume the sending, or give its turn up; runtime-neutral.
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { Claim } from "./claim.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { InboundMessage } from "./types.ts";
import { failureNotice, type TurnOutcome } from "./types.ts";

/** A claim and the message it runs. */
export interface ClaimedMessage {
  claim: Claim;
  message: InboundMessage;
}

/** What recovery needs of the runner's options (`TurnRunnerOptions`). */
export interface RecoveryOptions {
  maxAttempts: number;
  now: () => number;
  sender: OutboxSender | null;
}

/** A reply being delivered may be recovered this many times `maxAttempts` before it is given up. */
const _DELIVERY_TRIES = 4;

/** The outcome of a turn whose executor died `attempts` times. */
function _interrupted(attempts: number): Extract<TurnOutcome, { status: "failed" }> {
  return {
    status: "failed",
    error: {
      message: `the turn was interrupted ${attempts} times; giving up`,
      type: "turn_interrupted",
    },
  };
}

/**
 * Recovers the claim left in `stores` (TurnRunner.recoverOrphaned); `failUnreadable` fails a
 * message that cannot be read back. Only called when no executor of this instance is alive: any
 * claim left is a dead executor's.
 * A turn that died before its end runs again (up to maxAttempts); one that died while sending
 * resumes the sending under a renewed claim. A turn waiting for approval has no executor to
 * lose: it is left as it is, and one that died after its approval waits (answered) to resume.
 */
export function recoverOrphaned(
  stores: SessionStores,
  options: RecoveryOptions,
  failUnreadable: (tx: Tx, seq: number) => void,
): ClaimedMessage | null {
  const { db, inbox, claims, approvals } = stores;
  return db.transaction((tx) => {
    const { seq } = claims.state();
    if (seq === null) return null;
    const row = inbox.get(seq);
    if (row?.status === "waiting") return null;
    if (
      row?.status === "running" && row.attempts < options.maxAttempts &&
      approvals.paused(seq)
    ) {
      // It died after resuming: resume again from the pause rather than rerun from the start.
      inbox.countAttempt(tx, seq);
      inbox.markPaused(tx, seq, true);
      stores.events.dropResumedText(tx, seq);
      return null;
    }
    const live = row?.status === "running" || row?.status === "delivering" ? row : null;
    if (live && !inbox.message(seq)) {
      // Its message cannot be read back: no attempt could run or send it.
      claims.release(tx, true);
      failUnreadable(tx, seq);
      return null;
    }
    const { maxAttempts } = options;
    const retry = live !== null && live.attempts < maxAttempts;
    // Sending a stored reply again costs no model call, and every part in doubt is resolved
    // before it is resent: a reply being delivered gets more tries than a turn being run.
    if (live?.status === "delivering" && live.attempts < maxAttempts * _DELIVERY_TRIES) {
      const claim = claims.renew(tx, options.now())!;
      inbox.countAttempt(tx, seq);
      return { claim, message: inbox.message(seq)! };
    }
    if (!live) {
      claims.release(tx, true);
      return null;
    }
    if (retry) {
      claims.release(tx, true);
      inbox.requeue(tx, seq);
      stores.events.restartAttempt(tx, seq);
      return null;
    }
    const message = inbox.message(seq);
    if (live.status === "running" && message?.reply && options.sender) {
      // Given up on: the chat user is told so, through the outbox like any failed turn.
      const outcome = _interrupted(live.attempts);
      const target = message.reply;
      const text = failureNotice(outcome.error);
      const now = options.now();
      // A preview an attempt left (a Slack message) becomes the notice, never a second message.
      stores.outbox.add(
        tx,
        "reply",
        seq,
        target,
        options.sender.split(target, text),
        now,
        { replaces: inbox.preview(seq) },
      );
      inbox.markDelivering(tx, seq, outcome);
      return { claim: claims.renew(tx, now)!, message };
    }
    const outcome = live.status === "delivering" && live.outcome
      ? live.outcome
      : _interrupted(live.attempts);
    claims.release(tx, true);
    stores.settle(tx, seq, outcome);
    return null;
  });
}

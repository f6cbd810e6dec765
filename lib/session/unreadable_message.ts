// Failing a stored message that cannot be read back, so it never blocks its session; runtime-neutral.
import { unreadableOutcome } from "./inbox_columns.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import { failureNotice } from "./types.ts";

/**
 * Ends message `seq`, whose stored JSON cannot be read back, as failed (`unreadable_message`): a
 * waiting caller gets that outcome, and the session's chat (its newest readable message's, the
 * unreadable one's own target being unknown) a notice through the outbox. Returns whether a
 * notice was stored (send it once committed).
 */
export function failUnreadable(
  stores: SessionStores,
  tx: Tx,
  seq: number,
  sender: OutboxSender | null,
  now: number,
): boolean {
  const outcome = unreadableOutcome(seq);
  stores.settle(tx, seq, outcome);
  const chat = sender ? stores.inbox.lastFromChat()?.reply : undefined;
  if (!chat) return false;
  stores.outbox.add(tx, "notice", seq, chat, [failureNotice(outcome.error)], now);
  return true;
}

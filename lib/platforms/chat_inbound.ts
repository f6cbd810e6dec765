// A chat event as its session stores it: the adapter's parsed message with the access gate's verdict carried along, nothing recomputed; runtime-neutral.
import type { ParsedCommand, PlatformMessage } from "../chat/mod.ts";
import type { InboundMessage, TurnSpendRecord } from "../session/types.ts";

/**
 * What the access gate decided about a message it let through, decided once and carried with the
 * message to its session: never worked out again on the way.
 */
export interface Admission {
  /** The sender is an admin (`ADMIN_USERS`), found from the platform's own identity. */
  admin: boolean;
  /** The message's command, parsed at the gate (null: an ordinary text). */
  command: ParsedCommand | null;
  /** The daily token reservation the gate took for the turn (`InboundMessage.spend`). */
  spend?: TurnSpendRecord;
}

/**
 * A parsed chat event — a platform's message, or the generic webhook's, which has no reply
 * target — as its session takes it, the gate's `admission` carried along. Pure: every field comes
 * from the event as the adapter parsed it or from the gate's verdict.
 */
export function chatInbound(
  message: ChatEvent,
  admission: Admission,
): InboundMessage {
  return {
    text: message.text,
    ...(message.media?.length ? { platformMedia: message.media } : {}),
    ...(message.album ? { album: message.album } : {}),
    deliveryKey: message.deliveryKey,
    ...(message.keyMemoryMs ? { keyMemoryMs: message.keyMemoryMs } : {}),
    context: message.context,
    ...(message.reply ? { reply: message.reply } : {}),
    command: admission.command,
    // A chat the sender shares with others: grants and /stop are per member there (GROUP_STOP).
    ...(message.sender.direct ? {} : { group: true }),
    ...(admission.admin ? { admin: true } : {}),
    ...(admission.spend ? { spend: admission.spend } : {}),
  };
}

/** A parsed chat event the access gate judges: a platform's message, or one without a reply target. */
export type ChatEvent = Omit<PlatformMessage, "reply"> & { reply?: PlatformMessage["reply"] };

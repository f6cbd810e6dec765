// Completes a parsed event where it is made: the platform and the session key bound in its context and sender; runtime-neutral.
import type { EventContext, Sender } from "../chat/mod.ts";

/**
 * An event as an adapter parsed it, made complete where it is made: `platform` named in its
 * context and its sender, its `sessionKey` in its context. What leaves `parse` is passed on as it
 * is; nothing is added to it on the way.
 */
export function platformEvent<
  const E extends {
    sessionKey: string;
    context: Omit<EventContext, "platform" | "session_key">;
    sender: Omit<Sender, "platform">;
  },
>(
  platform: string,
  event: E,
): Omit<E, "context" | "sender"> & { context: EventContext; sender: Sender } {
  return {
    ...event,
    context: { platform, ...event.context, session_key: event.sessionKey },
    sender: { platform, ...event.sender },
  };
}

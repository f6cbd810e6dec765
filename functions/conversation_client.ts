// The Worker's client of the conversation pointers: which session a conversation state continues in; Workers.
import type { ConversationPointerDO } from "./conversation_pointer_do.ts";
import type { Env } from "./env.ts";
import { errorText, log } from "../lib/runtime/mod.ts";

/** The pointer object of a conversation fingerprint, typed with its RPC methods. */
function _pointerStub(env: Env, fingerprint: string): DurableObjectStub<ConversationPointerDO> {
  const namespace = env.CONVERSATIONS as DurableObjectNamespace<ConversationPointerDO>;
  return namespace.get(namespace.idFromName(fingerprint));
}

/** The session a conversation fingerprint points to (see `pointConversation`), or null. */
export async function findConversation(env: Env, fingerprint: string): Promise<string | null> {
  try {
    return await _pointerStub(env, fingerprint).session();
  } catch (error) {
    // No pointer is never wrong: the request then opens a new session seeded with its history.
    log.error("conversation lookup failed", { error: errorText(error) });
    return null;
  }
}

/** Points a conversation state (its fingerprint) at the session that holds it. */
export async function pointConversation(
  env: Env,
  fingerprint: string,
  session: string,
): Promise<void> {
  try {
    await _pointerStub(env, fingerprint).point(session);
  } catch (error) {
    log.error("conversation pointer not set", { error: errorText(error) });
  }
}

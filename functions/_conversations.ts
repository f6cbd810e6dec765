// Which session a chat request without X-Session-Id runs in: the one its history continues, else a new one; Workers.
import type { Context } from "hono";
import { tenantPrefix } from "../lib/api_tenants.ts";
import { conversationFingerprint, hashHex } from "../lib/openai_api.ts";
import type { ChatTurnInput } from "../lib/openai_api.ts";
import type { App } from "./_http.ts";
import { findConversation, pointConversation } from "./session_client.ts";

/**
 * Whose conversations and Idempotency-Keys these are, as hashed into their fingerprints, pointers
 * and key records: `api` for the default tenant (the value from before tenants, so an existing
 * deployment's pointers and key records still match), `api.<name>` for a named one. Another
 * tenant's hashes never coincide, so neither can continue or replay the other's requests.
 */
export function hashScope(c: Context<App>): string {
  return tenantPrefix(c.var.tenant.name).slice(0, -1);
}

/** Where a chat request runs, and whether it must continue that session's conversation. */
export interface ChatPlacement {
  sessionId: string;
  /** The session's conversation must be exactly the request's earlier messages (else: a new one). */
  continues: boolean;
}

/**
 * Places a request: with X-Session-Id in that session (its stored transcript is the truth);
 * without, in the session whose conversation is exactly the request's earlier messages when
 * one is known, else in a new session seeded with them. A first message goes to the session named
 * by its text, which takes it only while that session is empty (so a retry of a failed first
 * message finds its outcome there) — never joining a conversation.
 */
export async function placeChat(
  c: Context<App>,
  header: string | undefined,
  turn: ChatTurnInput,
): Promise<ChatPlacement> {
  if (header !== undefined) return { sessionId: header, continues: false };
  if (!turn.seed.some((m) => m.role === "user")) {
    return {
      sessionId: `f${await hashHex([hashScope(c), turn.system, turn.input], 16)}`,
      continues: true,
    };
  }
  const fingerprint = await conversationFingerprint(hashScope(c), turn.system, turn.seed);
  const sessionId = await findConversation(c.env, fingerprint);
  return sessionId ? { sessionId, continues: true } : newChatPlacement();
}

/** A new session for a conversation nobody has seen. */
export function newChatPlacement(): ChatPlacement {
  return { sessionId: `c${crypto.randomUUID().replaceAll("-", "")}`, continues: false };
}

/**
 * After a completed turn of a request without X-Session-Id: points the conversation's new state
 * (the earlier messages, the input and the reply) at its session. Awaited before the reply is
 * answered, so a client's next request finds it; if it failed, that request opens a new session
 * seeded with its history: never a mixed one.
 */
export async function rememberChat(
  c: Context<App>,
  turn: ChatTurnInput,
  reply: string,
  sessionId: string,
): Promise<void> {
  const state = [
    ...turn.seed,
    { role: "user" as const, content: turn.input },
    { role: "assistant" as const, content: reply },
  ];
  await pointConversation(
    c.env,
    await conversationFingerprint(hashScope(c), turn.system, state),
    sessionId,
  );
}

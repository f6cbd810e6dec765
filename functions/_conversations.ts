// Which session a chat request without X-Session-Id runs in: the one its history continues, else a new one; Workers.
import type { Context } from "hono";
import { tenantPrefix } from "../lib/api/mod.ts";
import { type ChatTurnInput, conversationFingerprint, hashHex } from "../lib/openai/mod.ts";
import type { ChatMessage } from "../lib/agent/mod.ts";
import type { App } from "./_http.ts";
import type { Placement } from "./_openai_pipeline.ts";
import { findConversation, pointConversation } from "./conversation_client.ts";

/**
 * Whose conversations and Idempotency-Keys these are, as hashed into their fingerprints, pointers
 * and key records: `api` for the default tenant (the value from before tenants, so an existing
 * deployment's pointers and key records still match), `api.<name>` for a named one. Another
 * tenant's hashes never coincide, so neither can continue or replay the other's requests.
 */
export function hashScope(c: Context<App>): string {
  return tenantPrefix(c.var.tenant.name).slice(0, -1);
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
): Promise<Placement> {
  if (header !== undefined) return { session: header, seed: turn.seed };
  if (!turn.seed.some((m) => m.role === "user")) {
    const session = `f${await hashHex([hashScope(c), turn.system, turn.input], 16)}`;
    return { session, seed: turn.seed, continues: "seed" };
  }
  const fingerprint = await conversationFingerprint(hashScope(c), turn.system, turn.seed);
  const session = await findConversation(c.env, fingerprint);
  return session ? { session, seed: turn.seed, continues: "seed" } : newChatPlacement(turn.seed);
}

/** A new session for a conversation nobody has seen, seeded with `seed`. */
export function newChatPlacement(seed: ChatMessage[]): Placement {
  return { session: `c${crypto.randomUUID().replaceAll("-", "")}`, seed };
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

// The conversation pointer Durable Object: one per conversation state (its fingerprint), naming the session it continues in; Workers (cloudflare:workers).
import { DurableObject } from "cloudflare:workers";
import { ConversationPointer } from "../lib/api/mod.ts";
import type { Env } from "./env.ts";

/**
 * One per conversation state of a chat request without X-Session-Id (idFromName: its
 * fingerprint, tenant-scoped): one key, no session, no sentinel. Its own class, so a session
 * object is only ever a session (before, pointers were session objects named `conv:…`).
 */
export class ConversationPointerDO extends DurableObject<Env> {
  readonly #pointer: ConversationPointer;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#pointer = new ConversationPointer(ctx.storage.kv);
  }

  /** The session this conversation state continues in, or null. */
  session(): string | null {
    return this.#pointer.session();
  }

  /** Points this conversation state at `session`. */
  point(session: string): void {
    this.#pointer.point(session);
  }
}

// A conversation pointer: which session a client's conversation state (its fingerprint) continues in, one per object; runtime-neutral.
import type { KeyStorage } from "./request_keys.ts";

const _KEY = "session";

/**
 * The pointer one object holds (a `ConversationPointerDO`, named by a conversation state's
 * fingerprint): the session whose conversation is exactly that state. A request without
 * X-Session-Id whose history has a pointer continues in its session; without one (never pointed,
 * its write failed, or lost) it opens a new session seeded with its history — never a mixed one.
 */
export class ConversationPointer {
  readonly #storage: KeyStorage;

  constructor(storage: KeyStorage) {
    this.#storage = storage;
  }

  /** The session this conversation state continues in, or null. */
  session(): string | null {
    return this.#storage.get<string>(_KEY) ?? null;
  }

  /**
   * Points this conversation state at `session` (a later pointing wins: the state's newest
   * session holds it). Throws TypeError for an empty session id: no pointer names no session.
   */
  point(session: string): void {
    if (session === "") throw new TypeError("a conversation pointer needs a session id");
    this.#storage.put(_KEY, session);
  }
}

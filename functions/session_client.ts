// The Worker's client of the session Durable Objects: the stub of a key, storing a message, awaiting its outcome; Workers.
import type { InboundMessage, SubmitReceipt, TurnOutcome } from "../lib/session/mod.ts";
import { RequestError } from "./_http.ts";
import type { Env } from "./env.ts";

/** The Durable Object stub of a session key. */
export function sessionStub(env: Env, sessionKey: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}

/**
 * Stores a message in its session; a storage failure becomes a 503 so the sender retries.
 * With `refuseWhenFull`, a full queue becomes a 429 (API and generic webhook callers).
 */
export async function submitMessage(
  env: Env,
  sessionKey: string,
  message: InboundMessage,
  refuseWhenFull: boolean,
): Promise<SubmitReceipt> {
  let receipt: SubmitReceipt;
  try {
    receipt = await sessionStub(env, sessionKey).submit(message);
  } catch (error) {
    console.error("submit failed", sessionKey, error instanceof Error ? error.message : "unknown");
    throw new RequestError(503, "the message could not be stored; retry", "unavailable");
  }
  if (receipt.refused && refuseWhenFull) {
    throw new RequestError(
      429,
      "too many messages are waiting in this session; retry later",
      "queue_full",
    );
  }
  return receipt;
}

/** Waits for a message's turn to end; survives a restart of the session object by asking again. */
export async function awaitOutcome(
  env: Env,
  message: InboundMessage,
  seq: number,
): Promise<TurnOutcome> {
  const key = message.context.session_key ?? "";
  for (let attempt = 0;; attempt++) {
    try {
      return await sessionStub(env, key).awaitOutcome(seq, message.context);
    } catch (error) {
      if (attempt >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
    }
  }
}

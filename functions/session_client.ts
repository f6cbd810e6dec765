// The Worker's client of the session Durable Objects: the stub of a key, storing a message, awaiting its outcome; Workers.
import type { InboundMessage, SubmitReceipt, TurnOutcome } from "../lib/session/mod.ts";
import type { ApprovalAnswer } from "../lib/chat/mod.ts";
import { type ContextFields, errorText, log } from "../lib/runtime/mod.ts";
import { RequestError } from "./_http.ts";
import type { Env } from "./env.ts";
import type { SessionDO } from "./session_do.ts";

/** The Durable Object stub of a session key, typed with SessionDO's RPC methods. */
export function sessionStub(env: Env, sessionKey: string): DurableObjectStub<SessionDO> {
  const namespace = env.SESSIONS as DurableObjectNamespace<SessionDO>;
  return namespace.get(namespace.idFromName(sessionKey));
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
    log.error("submit failed", { session_key: sessionKey, error: errorText(error) });
    throw new RequestError(503, "the message could not be stored; retry", "unavailable");
  }
  return _checked(receipt, refuseWhenFull);
}

/**
 * `submitMessage` (a full queue refused: 429) that also subscribes to the stored message's run
 * events in the same RPC (`SessionDO.submitAndSubscribe`): a streamed API turn's one call before
 * its model call. Null events when there is no such run (`history_mismatch`, or no events kept).
 */
export async function submitAndSubscribe(
  env: Env,
  sessionKey: string,
  message: InboundMessage,
): Promise<{ receipt: SubmitReceipt; events: ReadableStream<Uint8Array> | null }> {
  let answer: { receipt: SubmitReceipt; events: ReadableStream<Uint8Array> | null };
  try {
    answer = await sessionStub(env, sessionKey).submitAndSubscribe(message);
  } catch (error) {
    log.error("submit failed", { session_key: sessionKey, error: errorText(error) });
    throw new RequestError(503, "the message could not be stored; retry", "unavailable");
  }
  try {
    return { receipt: _checked(answer.receipt, true), events: answer.events };
  } catch (error) {
    void answer.events?.cancel().catch(() => {});
    throw error;
  }
}

/** `receipt`, or the HTTP error of its refusal (a full queue only with `refuseWhenFull`). */
function _checked(receipt: SubmitReceipt, refuseWhenFull: boolean): SubmitReceipt {
  if (receipt.refused === "idempotency_key_reused") throw _keyReused();
  if (receipt.refused === "session_limit") throw _sessionLimit(receipt);
  if (receipt.refused === "too_large") throw _tooLarge(receipt);
  if (receipt.refused === "queue_full" && refuseWhenFull) throw _queueFull();
  return receipt;
}

/** The HTTP error of a receipt its session refused (a full queue: 429), or null when it was stored. */
export function refusalError(receipt: SubmitReceipt): RequestError | null {
  if (receipt.refused === "idempotency_key_reused") return _keyReused();
  if (receipt.refused === "session_limit") return _sessionLimit(receipt);
  if (receipt.refused === "too_large") return _tooLarge(receipt);
  if (receipt.refused) return _queueFull();
  return null;
}

/**
 * Answers a click on one of a session's buttons; returns what the click did. A failure becomes a
 * 503: the platform may deliver the click again, and a second answer changes nothing.
 */
export async function answerClick(
  env: Env,
  sessionKey: string,
  data: string,
  context: ContextFields,
  admin: boolean,
): Promise<ApprovalAnswer> {
  try {
    return await sessionStub(env, sessionKey).answerClick(data, context, admin);
  } catch (error) {
    log.error("click failed", { session_key: sessionKey, error: errorText(error) });
    throw new RequestError(503, "the click could not be answered; retry", "unavailable");
  }
}

/**
 * Stores a message and waits for its turn's outcome in one call. The message gets a delivery key
 * when it has none, so that when the session object restarts mid-turn (the call fails) the retry
 * finds the stored message instead of storing it twice, and waits for it again. A message that
 * continues a session (`continuesSeed`, `continuesAfter`) which no longer has that history comes
 * back as `history_mismatch` (the OpenAI pipeline then forks).
 */
export async function runMessage(
  env: Env,
  sessionKey: string,
  message: InboundMessage,
  onPaused?: (seq: number) => void,
): Promise<{ seq: number; outcome: TurnOutcome } | "history_mismatch"> {
  const keyed = message.deliveryKey === undefined
    ? { ...message, deliveryKey: `req:${crypto.randomUUID()}` }
    : message;
  let untilPaused = onPaused !== undefined;
  for (let attempt = 0;; attempt++) {
    let answer: { receipt: SubmitReceipt; outcome: TurnOutcome | null; paused?: true };
    try {
      answer = await sessionStub(env, sessionKey).submitAndWait(keyed, untilPaused);
    } catch (error) {
      if (attempt >= 8) {
        log.error("run failed", { session_key: sessionKey, error: errorText(error) });
        throw new RequestError(503, "the session is unavailable; retry", "unavailable");
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
      continue;
    }
    if (answer.receipt.refused === "history_mismatch") return "history_mismatch";
    if (answer.receipt.refused === "idempotency_key_reused") throw _keyReused();
    if (answer.receipt.refused === "session_limit") throw _sessionLimit(answer.receipt);
    if (answer.receipt.refused === "too_large") throw _tooLarge(answer.receipt);
    if (answer.paused && onPaused) {
      // Told once; then the same delivery key finds the stored message and waits for its outcome.
      onPaused(answer.receipt.seq);
      untilPaused = false;
      attempt = -1;
      continue;
    }
    if (answer.receipt.refused || !answer.outcome) throw _queueFull();
    return { seq: answer.receipt.seq, outcome: answer.outcome };
  }
}

function _keyReused(): RequestError {
  return new RequestError(
    422,
    "Idempotency-Key was used before with a different request",
    "idempotency_key_reused",
  );
}

// Retrying cannot help (only a deletion can): a 403, which clients do not retry, not a 429.
function _sessionLimit(receipt: SubmitReceipt): RequestError {
  const text = receipt.notice ?? "this API key's tenant holds MAX_SESSIONS_PER_TENANT sessions";
  return new RequestError(403, text, "session_limit");
}

/** A message its session would not store: it could not be read back (`notice` names the limit). */
function _tooLarge(receipt: SubmitReceipt): RequestError {
  const text = receipt.notice ?? "the message cannot be stored";
  return new RequestError(413, text, "request_too_large");
}

function _queueFull(): RequestError {
  return new RequestError(
    429,
    "too many messages are waiting in this session; retry later",
    "queue_full",
  );
}

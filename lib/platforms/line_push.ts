// A LINE reply part pushed: the push message (text, a file's image, a question's quick replies) under a retry key drawn from the part, so a resend never shows twice; runtime-neutral (fetch, Web Crypto).
import type { Choice, PartSend, PlatformEnv, SendResult } from "../chat/mod.ts";
import { jsonField, retryAfterHeader } from "./_kit.ts";
import { lineCall } from "./line_call.ts";
import { encodeHex } from "../runtime/mod.ts";

/** LINE states no wait for a 429: a second, then the outbox backs off further. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;
/** A 429 for the month's message quota: waiting minutes does not help. */
const _MONTHLY_LIMIT = /monthly limit/i;
/** Quick reply: at most 13 buttons, labels of at most 20 characters. */
const _MAX_QUICK_REPLIES = 13;
const _LABEL_CHARS = 20;

/**
 * The `X-Line-Retry-Key` of a part: a UUID drawn from the chat and the part's marker, so a resend
 * of the same part carries the same key and LINE answers 409 instead of showing it twice. Without
 * a marker (a notice sent outside the outbox), a fresh one.
 */
export async function lineRetryKey(to: string, marker: string | undefined): Promise<string> {
  if (!marker) return crypto.randomUUID();
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${to}|${marker}`)),
  ).slice(0, 16);
  digest[6] = (digest[6] & 0x0f) | 0x40; // version 4 layout, as LINE requires a UUID
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = encodeHex(digest);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/**
 * A reply part pushed to `target.to` (a user, group or room id): `lead` messages (a file's image),
 * then `text` unless it is empty beside them; a question's choices ride as quick replies. A 409
 * to the retry key means an earlier send of this very part was accepted: success.
 */
export async function linePush(
  target: { to: string },
  text: string,
  part: PartSend,
  env: PlatformEnv,
  lead: Record<string, unknown>[] = [],
): Promise<SendResult> {
  const message = {
    type: "text",
    text,
    ...(part.choices?.length ? { quickReply: _quickReply(part.choices) } : {}),
  };
  const retryKey = await lineRetryKey(target.to, part.marker);
  const messages = lead.length && !text ? lead : [...lead, message];
  const result = await lineCall("/v2/bot/message/push", { to: target.to, messages }, env, {
    leaving: part.leaving,
    // The retry key makes a repeat harmless: a lost answer or a 5xx may be sent again.
    idempotent: true,
    rateLimited: ({ status, body }) =>
      status === 429 && !_MONTHLY_LIMIT.test(String(jsonField(body, "message") ?? "")),
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
  }, { "x-line-retry-key": retryKey });
  // 409 to a retry key: an earlier send of this very part was accepted.
  if (!result.ok && result.status === 409) return { ok: true };
  return result;
}

/**
 * A question's choices as quick reply buttons under its (last) message: postback actions whose
 * `data` is the choice, and whose `displayText` shows in the chat as the clicker's own message, so
 * everyone sees what was chosen. LINE takes them away once anything is sent after.
 */
function _quickReply(choices: readonly Choice[]) {
  return {
    items: choices.slice(0, _MAX_QUICK_REPLIES).map((c) => ({
      type: "action",
      action: {
        type: "postback",
        label: [...c.label].slice(0, _LABEL_CHARS).join(""),
        data: c.data,
        displayText: c.label,
      },
    })),
  };
}

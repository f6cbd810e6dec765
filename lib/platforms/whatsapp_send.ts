// A WhatsApp reply part sent: the Graph API `messages` POST (a text, a question's buttons, a file's media), Meta's rate-limit codes and its 24-hour window refusal worded; runtime-neutral (fetch).
import type { PartSend, PlatformEnv, SendResult } from "../chat/mod.ts";
import {
  type Answer,
  apiRoot,
  detail,
  jsonField,
  retryAfterHeader,
  type SendOptions,
  sendRequest,
  type WaitSource,
} from "./_kit.ts";
import { whatsappInteractive } from "./whatsapp_choices.ts";

const _DEFAULT_API_ROOT = "https://graph.facebook.com/v21.0";
/** Graph error codes that mean "slow down": app, account, throughput and per-recipient limits. */
const _RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131056]);
/** The pair rate (one recipient) allows about one message every 6 s. */
const _PAIR_RATE_CODE = 131056;
const _PAIR_RATE_WAIT_S = 6;
const _DEFAULT_RATE_LIMIT_WAIT_MS = 2_000;
/** "Re-engagement message": more than 24 h since the customer last wrote; only templates may go. */
const _OUTSIDE_WINDOW_CODE = 131047;

/** The fields of a WhatsApp reply target a send needs: the business number, the customer, their message. */
type _Target = { phone_number_id: string; to: string; message_id?: string };

/**
 * A POST to the business number's `messages` endpoint (`WHATSAPP_API_ROOT`, else the Graph API)
 * with the access token: replies, and the typing indicator. `options` go to `sendRequest`.
 */
export function whatsappPost(
  phoneNumberId: string,
  payload: Record<string, unknown>,
  env: PlatformEnv,
  options: Omit<SendOptions, "api" | "secrets">,
): Promise<SendResult> {
  const token = env.WHATSAPP_ACCESS_TOKEN ?? "";
  const root = apiRoot(env, "WHATSAPP_API_ROOT", _DEFAULT_API_ROOT);
  return sendRequest(`${root}/${phoneNumberId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "whatsapp", ...payload }),
  }, { ...options, api: "WhatsApp Cloud API", secrets: [token] });
}

/**
 * A reply part: `text` (a question's choices as reply buttons or a list), or the message
 * `content` given (a file's media by link). The first part quotes the customer's message. Meta's
 * rate-limit codes wait and retry; a reply outside the 24-hour window (131047) is a final
 * failure, worded so.
 */
export async function whatsappSend(
  target: _Target,
  text: string,
  part: PartSend,
  env: PlatformEnv,
  content?: Record<string, unknown>,
): Promise<SendResult> {
  const payload: Record<string, unknown> = {
    recipient_type: "individual",
    to: target.to,
    ...(content ??
      (part.choices?.length
        ? { type: "interactive", interactive: whatsappInteractive(text, part.choices) }
        : { type: "text", text: { body: text, preview_url: false } })),
  };
  // The first part quotes the customer's message, as a reply in the app does.
  if (part.index === 0 && target.message_id) payload.context = { message_id: target.message_id };
  return await whatsappPost(target.phone_number_id, payload, env, {
    leaving: part.leaving,
    rateLimited: (answer) =>
      answer.status === 429 || _RATE_LIMIT_CODES.has(_errorCode(answer) ?? -1),
    waitFrom: [retryAfterHeader, _pairRateWait],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: (answer) => {
      const code = _errorCode(answer);
      const text = detail(jsonField(answer.body, "error", "message"));
      if (code === _OUTSIDE_WINDOW_CODE) {
        return `WhatsApp refused the reply: more than 24 hours since the customer's last message ` +
          `(error ${code}); only a template message can reach them now${text}`;
      }
      return `the WhatsApp Cloud API answered ${answer.status}` +
        (code === undefined ? "" : ` (error ${code})`) + text;
    },
  });
}

/** The Graph error code of an answer (`error.code`), if it names one. */
function _errorCode(answer: Answer): number | undefined {
  const code = jsonField(answer.body, "error", "code");
  return typeof code === "number" ? code : undefined;
}

/** The pair rate's known pace when the answer names no wait. */
const _pairRateWait: WaitSource = (answer) =>
  _errorCode(answer) === _PAIR_RATE_CODE ? _PAIR_RATE_WAIT_S : undefined;

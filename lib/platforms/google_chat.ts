// Google Chat adapter: events in (Chat API interaction events, or a Workspace add-on's event objects) as JWTs from Chat's issuer or Google ID tokens for a URL audience, card clicks answered privately, Chat API messages out as the service account, idempotent by client message id; runtime-neutral (fetch, Web Crypto, jose).
import type {
  OutgoingFile,
  PartSend,
  PlatformAdapter,
  PlatformEnv,
  SendResult,
} from "../chat/mod.ts";
import { apiRoot, detail, jsonField, retryAfterHeader, sendRequest } from "./_kit.ts";
import { encodeHex } from "../runtime/mod.ts";
import { googleChatToken } from "./google_chat_token.ts";
import { fetchGoogleChatMedia } from "./google_chat_media.ts";
import { googleChatFileMessage } from "./google_chat_files.ts";
import { fileAsText } from "./_file_out.ts";
import { googleChatAddOnAgentOf, verifyGoogleChatRequest } from "./google_chat_auth.ts";
import {
  answerGoogleChatChoice,
  GOOGLE_CHAT_CHOICE,
  googleChatCards,
} from "./google_chat_cards.ts";
import {
  GOOGLE_CHAT_ACK,
  type GoogleChatTarget,
  googleChatTarget,
  parseGoogleChatEvent,
} from "./google_chat_events.ts";

export { GOOGLE_CHAT_ISSUER, googleChatAddOnAgent } from "./google_chat_auth.ts";
export type { GoogleChatTarget } from "./google_chat_events.ts";

const _DEFAULT_API_ROOT = "https://chat.googleapis.com/v1";
/** Google's 429s usually state no wait: two seconds, then the outbox backs off further. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 2_000;

/**
 * What a card button invokes: for an app built as a Workspace add-on, its HTTP endpoint (an
 * add-on's action `function` is the URL Chat calls, as Google's add-on samples set it:
 * googleworkspace/add-ons-samples node/chat/contact-form-app); else the name a Chat API app
 * reads back.
 */
function _buttonFunction(env: PlatformEnv): string {
  return googleChatAddOnAgentOf(env)
    ? (env.GOOGLE_CHAT_AUDIENCE ?? "").trim()
    : GOOGLE_CHAT_CHOICE.function;
}

/**
 * The client-assigned message id of a part (`client-…`, lowercase, ≤ 63 characters) drawn from
 * the space and the part's marker: a resend of the same part asks for the same message, which
 * Chat creates once. Without a marker (a notice outside the outbox), a fresh one.
 */
export async function googleChatMessageId(
  space: string,
  marker: string | undefined,
): Promise<string> {
  const seed = marker ? `${space}|${marker}` : crypto.randomUUID();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed));
  return `client-baton-${encodeHex(new Uint8Array(digest)).slice(0, 48)}`;
}

/**
 * Creates part `text` as a message in the target's thread, `extra` (a file's card) beside the
 * text, under the part's client message id.
 */
async function _send(
  target: GoogleChatTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
  extra: Record<string, unknown> = {},
): Promise<SendResult> {
  const token = await googleChatToken(env);
  if (!token.ok) return token;
  const root = apiRoot(env, "GOOGLE_CHAT_API_ROOT", _DEFAULT_API_ROOT);
  const id = await googleChatMessageId(target.space, part.marker);
  const query = new URLSearchParams({ messageId: id, requestId: id });
  if (target.thread) query.set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
  const result = await sendRequest(`${root}/${target.space}/messages?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      text,
      ...(part.choices?.length
        ? { cardsV2: googleChatCards(part.choices, _buttonFunction(env)) }
        : {}),
      ...extra,
      ...(target.thread ? { thread: { name: target.thread } } : {}),
    }),
  }, {
    api: "Google Chat API",
    leaving: part.leaving,
    secrets: [token.token, ...token.secrets],
    // The request id makes a repeat return the message already created: a 5xx may be resent.
    idempotent: true,
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }) =>
      `the Google Chat API answered ${status}${detail(jsonField(body, "error", "status"))}`,
  });
  // ALREADY_EXISTS for our client id: an earlier send of this very part was created.
  if (!result.ok && result.status === 409) return { ok: true };
  return result;
}

/**
 * Google Chat as an HTTP app: `MESSAGE` events in (DMs, and mentions in spaces, the mention left
 * out) and `CARD_CLICKED` on baton's buttons — or the same as a Workspace add-on's event objects
 * (`chat.messagePayload`, `chat.buttonClickedPayload`) for an app built as an add-on — replies out through the Chat API as the service
 * account, in the thread they answer (a question with a card of buttons, a file as a card by its
 * signed link); every part has a client
 * message id and request id drawn from its marker, so a resend is created once. No `typing`: Chat
 * has no API for an app's typing indicator.
 */
export const googleChatAdapter: PlatformAdapter<GoogleChatTarget> = {
  name: "google-chat",
  requiredEnv: ["GOOGLE_CHAT_AUDIENCE", "GOOGLE_CHAT_SERVICE_ACCOUNT"],
  maxMessageChars: 4096,
  asyncDelivery: false,
  replyTarget: googleChatTarget,
  acknowledgement: GOOGLE_CHAT_ACK,
  verify: verifyGoogleChatRequest,
  parse: (request) => parseGoogleChatEvent(request.body),
  send: _send,
  // A file as a card (an image widget, or a button to its signed link: google_chat_files.ts),
  // created once by the part's client message id; without a link, the file's note as text.
  // The platform fetches the signed link: MEDIA's bytes are never read for it.
  filesByLink: true,
  sendFile: (target: GoogleChatTarget, file: OutgoingFile, caption, part, env) => {
    const message = googleChatFileMessage(file);
    return message
      ? _send(target, caption, part, env, message)
      : _send(target, fileAsText(file, caption), part, env);
  },
  // Every part's request id is drawn from its marker: sending it again cannot show twice.
  idempotentPart: () => true,
  answerChoice: answerGoogleChatChoice,
  fetchMedia: fetchGoogleChatMedia,
};

// WhatsApp Business Cloud API adapter: GET handshake, X-Hub-Signature-256 webhooks in (text and media messages, clicks on baton's buttons), Graph API messages and typing out; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  approvalClickText,
  type ClickAnswer,
  type Ingress,
  isChoiceData,
  type OutgoingFile,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type PlatformMessage,
  type WebhookAnswer,
} from "../chat/mod.ts";
import { batchIngress, clickNoticeDue, ignore } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { fileAsText } from "./_file_out.ts";
import { whatsappFileContent } from "./whatsapp_files.ts";
import { whatsappTapData } from "./whatsapp_choices.ts";
import { fetchWhatsappMedia, whatsappMedia } from "./whatsapp_media.ts";
import { whatsappPost, whatsappSend } from "./whatsapp_send.ts";
import {
  constantTimeEquals,
  decodeHex,
  encodeHex,
  hmacSign,
  hmacVerify,
  log,
} from "../runtime/mod.ts";
import { keyMemoryFor, olderThanHorizon } from "./_replay_horizon.ts";

const _SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
/** Meta's challenge is a number; anything else is not echoed (the GET answer is ours to shape). */
const _CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;
const _ID = /^[0-9]{1,32}$/;
/**
 * The typing indicator lasts 25 s or until the next message to the customer: renewed this often
 * (`typingEveryMs`), a long turn keeps it for one call every ~20 s, not one every 4 s.
 */
const _TYPING_RENEW_MS = 18_000;
/**
 * Meta retries a notification that was not answered 200 "with decreasing frequency until the
 * request succeeds, for up to 7 days" (Cloud API, Set up webhooks: webhook delivery failure,
 * https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks#webhook-delivery-failure).
 */
const _META_RETRY_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * How old a message (its signed `timestamp`) may be and still start anything; older is refused as
 * a replay, acknowledged and logged. Meta signs no delivery time, so past its retries a message
 * can only be a replay. Inside them a retry days late (baton was down) runs once, its id kept as
 * long (`keyMemoryMs`), beyond the inbox's day: the message is not lost, though its reply may be
 * refused (131047: over 24 h since the customer last wrote), a final failure, logged.
 */
const _EVENT_HORIZON_MS = _META_RETRY_MS;
/** How long a message's delivery key is remembered: as long as the horizon lets it in. */
const _KEY_MEMORY_MS = keyMemoryFor(_EVENT_HORIZON_MS);

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _inbound = z.lazy(() =>
  z.looseObject({
    from: z.string().regex(_ID),
    id: z.string().min(1).max(256),
    /** Unix seconds, a decimal string as Meta sends it. */
    timestamp: z.union([z.string(), z.number()]).optional(),
    type: z.string(),
    text: z.looseObject({ body: z.string() }).optional(),
    interactive: z.unknown().optional(),
  })
);

const _value = z.lazy(() =>
  z.looseObject({
    messaging_product: z.string().optional(),
    metadata: z.looseObject({ phone_number_id: z.string().regex(_ID) }),
    contacts: z.array(
      z.looseObject({
        wa_id: z.string().optional(),
        profile: z.looseObject({ name: z.string().optional() }).optional(),
      }),
    ).optional(),
    messages: z.array(z.unknown()).optional(),
    statuses: z.array(z.unknown()).optional(),
  })
);

const _notification = z.lazy(() =>
  z.looseObject({
    object: z.string(),
    entry: z.array(
      z.looseObject({
        changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })).optional(),
      }),
    ),
  })
);

const _status = z.lazy(() =>
  z.looseObject({
    status: z.string().optional(),
    errors: z.array(z.looseObject({ code: z.number().optional(), title: z.string().optional() }))
      .optional(),
  })
);

/** Where a WhatsApp reply goes: from the business number, to the customer, quoting their message. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("whatsapp"),
    phone_number_id: z.string().regex(_ID),
    to: z.string().regex(_ID),
    message_id: z.string().min(1).max(256).optional(),
  })
);

/** A WhatsApp reply target, as stored with the message. */
export type WhatsappTarget = z.infer<typeof _target>;

/** The subscription handshake: echo `hub.challenge` when the verify token matches, else 403. */
async function _handshake(query: URLSearchParams, env: PlatformEnv): Promise<WebhookAnswer> {
  const mode = query.get("hub.mode");
  const token = query.get("hub.verify_token") ?? "";
  const challenge = query.get("hub.challenge") ?? "";
  const matches = await constantTimeEquals(token, env.WHATSAPP_VERIFY_TOKEN ?? "");
  if (mode !== "subscribe" || !matches || !_CHALLENGE.test(challenge)) {
    return {
      status: 403,
      body: {
        error: {
          message: "hub.mode must be subscribe, hub.verify_token must match " +
            "WHATSAPP_VERIFY_TOKEN and hub.challenge must be given",
          type: "invalid_verify_token",
        },
      },
    };
  }
  return { status: 200, body: challenge, contentType: "text/plain; charset=utf-8" };
}

/**
 * Every text message and click of a verified notification, for the configured business number
 * only; a message older than the horizon at `nowSeconds` is dropped (logged), the others kept.
 */
function _parse(body: Uint8Array, env: PlatformEnv, nowSeconds: number): Ingress<WhatsappTarget> {
  const notification = _notification.safeParse(parseJsonBody(body));
  if (!notification.success) return ignore();
  if (notification.data.object !== "whatsapp_business_account") {
    return ignore(`object ${notification.data.object.slice(0, 64)}`);
  }
  const ours = env.WHATSAPP_PHONE_NUMBER_ID ?? "";
  const messages: PlatformMessage<WhatsappTarget>[] = [];
  const choices: PlatformChoice<WhatsappTarget>[] = [];
  for (const entry of notification.data.entry) {
    for (const change of entry.changes ?? []) {
      if (change.field !== "messages") continue;
      const value = _value.safeParse(change.value);
      if (!value.success) continue;
      // Another number of the same business account: not this bot's to answer.
      if (value.data.metadata.phone_number_id !== ours) continue;
      for (const status of value.data.statuses ?? []) _logStatus(status);
      for (const raw of value.data.messages ?? []) {
        const parsed = _inbound.safeParse(raw);
        // Malformed: acknowledged, no turn (as reactions, locations and unsupported types are).
        if (!parsed.success) continue;
        const { id, timestamp, type, text, interactive } = parsed.data;
        const eventMs = timestamp === undefined ? undefined : Number(timestamp) * 1000;
        if (olderThanHorizon("whatsapp", { id, eventMs }, nowSeconds, _EVENT_HORIZON_MS)) continue;
        if (type === "text" && text?.body) {
          const author = _author(parsed.data, value.data, ours);
          messages.push({ ...author, keyMemoryMs: _KEY_MEMORY_MS, text: text.body });
        }
        // Media are announced, never fetched here: the turn fetches them (`fetchMedia`).
        const medium = whatsappMedia(parsed.data);
        if (medium) {
          const author = _author(parsed.data, value.data, ours);
          messages.push({
            ...author,
            keyMemoryMs: _KEY_MEMORY_MS,
            text: medium.caption,
            media: [medium.media],
          });
        }
        const data = whatsappTapData(interactive);
        // Another flow's buttons or lists: acknowledged, nothing to answer.
        if (type === "interactive" && isChoiceData(data)) {
          choices.push({ ..._author(parsed.data, value.data, ours), data });
        }
      }
    }
  }
  return batchIngress(messages, choices);
}

/**
 * Who wrote an inbound message (a text, or a tap on a button: a message too), and where it goes:
 * the same for both, so a click passes the access gate as its clicker's messages do.
 */
function _author(
  message: { from: string; id: string },
  value: z.infer<typeof _value>,
  phoneNumberId: string,
): Omit<PlatformMessage<WhatsappTarget>, "text"> {
  const { from, id } = message;
  const contact = value.contacts?.find((c) => c.wa_id === from) ?? value.contacts?.[0];
  const name = contact?.profile?.name ?? "";
  return platformEvent("whatsapp", {
    sessionKey: `whatsapp:${phoneNumberId}:${from}`,
    // The message id Meta signs: a retry keeps it, so one turn while its key is remembered (the
    // horizon refuses the message once it may not be).
    deliveryKey: `wa:${id}`,
    context: {
      chat_id: from,
      chat_name: name,
      thread_id: "",
      user_id: from,
      user_name: name,
      message_id: id,
    },
    reply: { platform: "whatsapp", phone_number_id: phoneNumberId, to: from, message_id: id },
    // A Cloud API chat is always one customer and the business.
    sender: { user: from, name, direct: true },
  });
}

/** Status callbacks start nothing; a failed one is logged by its code (a window closed, a block). */
function _logStatus(raw: unknown): void {
  const status = _status.safeParse(raw);
  if (!status.success || status.data.status !== "failed") return;
  const error = status.data.errors?.[0];
  log.warn("whatsapp: a sent message failed", {
    error_code: error?.code ?? 0,
    title: (error?.title ?? "").slice(0, 120),
  });
}

/**
 * Answers a click. WhatsApp has no answer seen by the clicker alone (no toast, no ephemeral): the
 * tap itself shows in the chat as the customer's reply, and an approval shows by the turn going on.
 * So only what a click that did nothing must say ("Already answered" for a question's old buttons)
 * is sent to the chat, as Telegram's toast or Slack's ephemeral would say it; the webhook is
 * answered 200 either way, promptly, as Meta wants. A failure is logged only: the click has been
 * judged already.
 */
async function _answerChoice(
  choice: PlatformChoice<WhatsappTarget>,
  answer: ClickAnswer,
  env: PlatformEnv,
): Promise<{ status: number; body: unknown }> {
  if (clickNoticeDue(answer)) {
    const text = approvalClickText(answer);
    const result = await whatsappSend(choice.reply, text, { index: 0, count: 1 }, env);
    if (!result.ok) log.warn("whatsapp: a click was not answered", { error: result.message });
  }
  return { status: 200, body: { ok: true } };
}

/**
 * The typing indicator on the customer's message (which also marks it read). It needs that
 * message's id: a target stored without one (or a click's notice) shows none. It lasts 25 s, or
 * until the next message, and is renewed every `_TYPING_RENEW_MS`. A failure or a rate limit is
 * false, and the turn stops asking.
 */
async function _typing(target: WhatsappTarget, env: PlatformEnv): Promise<boolean> {
  const messageId = target.message_id;
  if (!messageId) return false;
  const result = await whatsappPost(
    target.phone_number_id,
    {
      status: "read",
      message_id: messageId,
      typing_indicator: { type: "text" },
    },
    env,
    { leaving: undefined },
  );
  return result.ok;
}

/**
 * WhatsApp Business Cloud API webhooks in (the GET subscription handshake; signed `messages`
 * notifications with text, media (fetched inside the turn: whatsapp_media.ts), and taps on
 * baton's buttons and lists; status callbacks acknowledged;
 * messages older than the replay horizon refused), Graph API messages out (a question as reply
 * buttons or a list), the typing indicator while a turn runs. A reply outside the 24-hour
 * customer-service window is refused by the API (131047): a final failure, never retried.
 */
export const whatsappAdapter: PlatformAdapter<WhatsappTarget> = {
  name: "whatsapp",
  requiredEnv: [
    "WHATSAPP_APP_SECRET",
    "WHATSAPP_VERIFY_TOKEN",
    "WHATSAPP_ACCESS_TOKEN",
    "WHATSAPP_PHONE_NUMBER_ID",
  ],
  maxMessageChars: 4096,
  asyncDelivery: false,
  replyTarget: _target,
  async verify(request, env) {
    const secret = env.WHATSAPP_APP_SECRET;
    if (!secret) return "WHATSAPP_APP_SECRET is not set";
    const match = _SIGNATURE.exec(request.headers.get("x-hub-signature-256") ?? "");
    if (!match) return "missing or malformed X-Hub-Signature-256 (expected sha256=<64 hex digits>)";
    const signature = decodeHex(match[1], 32);
    const ok = signature !== null && await hmacVerify(secret, signature, request.body);
    return ok ? null : "X-Hub-Signature-256 does not match the body";
  },
  parse: (request, env) => _parse(request.body, env, request.nowSeconds),
  // Message ids kept for as long as Meta retries, past the inbox's day.
  handshake: _handshake,
  send: whatsappSend,
  // A file as media WhatsApp fetches from its signed link; without a link, its note in text.
  // The platform fetches the signed link: MEDIA's bytes are never read for it.
  filesByLink: true,
  sendFile: (target: WhatsappTarget, file: OutgoingFile, caption, part, env) => {
    const content = whatsappFileContent(file, caption);
    return content
      ? whatsappSend(target, caption, part, env, content)
      : whatsappSend(target, fileAsText(file, caption), part, env);
  },
  fetchMedia: fetchWhatsappMedia,
  answerChoice: _answerChoice,
  typing: _typing,
  typingEveryMs: _TYPING_RENEW_MS,
};

/** Signs a body as Meta does: `sha256=<hex HMAC-SHA256 under the app secret>`. For tests and tooling. */
export async function signWhatsappPayload(
  appSecret: string,
  body: string | Uint8Array,
): Promise<string> {
  return `sha256=${encodeHex(await hmacSign(appSecret, body))}`;
}

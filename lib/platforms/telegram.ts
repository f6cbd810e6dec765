// Telegram Bot API adapter: secret-token check, update parsing, sendMessage replies; runtime-neutral (fetch, Web Crypto).
import { z } from "zod";
import {
  type Ingress,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformEnv,
  type RawRequest,
  type ReplyTarget,
  type SendResult,
} from "../platform.ts";

const _HEADER = "X-Telegram-Bot-Api-Secret-Token";
const _DEFAULT_API_ROOT = "https://api.telegram.org";
const _TOKEN = /^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;
const _encoder = new TextEncoder();

const _user = z.looseObject({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
});

const _chat = z.looseObject({
  id: z.number().int(),
  title: z.string().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
});

const _message = z.looseObject({
  message_id: z.number().int(),
  chat: _chat,
  from: _user.optional(),
  sender_chat: _chat.optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  is_automatic_forward: z.boolean().optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
});

const _update = z.looseObject({ update_id: z.number().int() });

const _sendAnswer = z.looseObject({
  ok: z.boolean().optional(),
  description: z.string().optional(),
  parameters: z.looseObject({ retry_after: z.number().optional() }).optional(),
});

// Where a Telegram reply goes: the chat, the topic (forums only) and the message answered.
interface _TelegramTarget extends ReplyTarget {
  platform: "telegram";
  chat_id: number;
  message_id: number;
  message_thread_id?: number;
}

const _ignored: Ingress = { kind: "respond", status: 200, body: { ok: true } };

async function _digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", _encoder.encode(text)));
}

// Equal-length SHA-256 digests compared with a full XOR loop: no early exit, no length leak.
async function _secretEquals(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([_digest(given), _digest(expected)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

function _displayName(chat: z.infer<typeof _chat>): string {
  return chat.title ?? chat.username ?? chat.first_name ?? "";
}

function _parseUpdate(request: RawRequest, env: PlatformEnv): Ingress {
  const update = _update.safeParse(parseJsonBody(request.body));
  if (!update.success) return _ignored;
  // edited_message, channel_post, my_chat_member, callback_query, …: acknowledged, no turn.
  if (!("message" in update.data)) return _ignored;
  const parsed = _message.safeParse(update.data.message);
  if (!parsed.success) return _ignored;
  const message = parsed.data;
  if (message.is_automatic_forward) return _ignored;
  const text = message.text || message.caption;
  if (!text) return _ignored; // Service messages (joins, pins, titles) and media without a caption.

  const { chat } = message;
  // An anonymous group admin posts as the group itself, with the placeholder bot in `from`.
  const anonymousAdmin = message.sender_chat !== undefined && message.sender_chat.id === chat.id;
  if (!anonymousAdmin && (!message.from || message.from.is_bot)) return _ignored;
  const sender = anonymousAdmin
    ? { id: chat.id, name: _displayName(chat) }
    : { id: message.from!.id, name: message.from!.username ?? message.from!.first_name ?? "" };

  const topic = message.is_topic_message === true ? message.message_thread_id : undefined;
  const sessionKey = topic === undefined ? `telegram:${chat.id}` : `telegram:${chat.id}:${topic}`;
  const botId = _botId(env);
  const reply: _TelegramTarget = {
    platform: "telegram",
    chat_id: chat.id,
    message_id: message.message_id,
    ...(topic === undefined ? {} : { message_thread_id: topic }),
  };
  return {
    kind: "message",
    message: {
      sessionKey,
      deliveryKey: botId ? `tg:${botId}:${update.data.update_id}` : `tg:${update.data.update_id}`,
      text,
      context: {
        chat_id: String(chat.id),
        chat_name: _displayName(chat),
        thread_id: topic === undefined ? "" : String(topic),
        user_id: String(sender.id),
        user_name: sender.name,
        message_id: String(message.message_id),
      },
      reply,
    },
  };
}

// The bot's numeric id: the token's part before the colon (public, unlike the rest).
function _botId(env: PlatformEnv): string {
  const token = env.TELEGRAM_BOT_TOKEN ?? "";
  return _TOKEN.test(token) ? token.slice(0, token.indexOf(":")) : "";
}

function _failure(status: number, message: string): SendResult {
  return { ok: false, status, retryable: false, message };
}

async function _sendMessage(
  target: ReplyTarget,
  text: string,
  part: { index: number; count: number },
  env: PlatformEnv,
): Promise<SendResult> {
  const token = env.TELEGRAM_BOT_TOKEN ?? "";
  if (!_TOKEN.test(token)) {
    return _failure(0, "TELEGRAM_BOT_TOKEN is not a bot token of the form <id>:<secret>");
  }
  const chatId = target.chat_id;
  if (typeof chatId !== "number" && typeof chatId !== "string") {
    return _failure(0, "the Telegram reply target has no chat_id");
  }
  const root = (env.TELEGRAM_API_ROOT || _DEFAULT_API_ROOT).replace(/\/+$/, "");
  const payload: Record<string, unknown> = { chat_id: chatId, text };
  if (target.message_thread_id !== undefined) payload.message_thread_id = target.message_thread_id;
  if (part.index === 0 && target.message_id !== undefined) {
    payload.reply_parameters = {
      message_id: target.message_id,
      allow_sending_without_reply: true,
    };
  }
  let res: Response;
  try {
    res = await fetch(`${root}/bot${token}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
  } catch {
    // The error would carry the URL, hence the token: never pass it on. Not retried either:
    // a connection lost after the request went out may still have posted the message.
    return _failure(0, "could not reach the Telegram Bot API");
  }
  let body: unknown = undefined;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const answer = _sendAnswer.safeParse(body);
  const data = answer.success ? answer.data : {};
  if (res.ok && data.ok !== false) return { ok: true };
  const detail = data.description
    ? `: ${data.description.split(token).join("<token>").slice(0, 200)}`
    : "";
  const message = `Telegram sendMessage answered ${res.status}${detail}`;
  if (res.status !== 429) return _failure(res.status, message);
  const seconds = data.parameters?.retry_after ?? Number(res.headers.get("retry-after") ?? NaN);
  return {
    ok: false,
    status: 429,
    retryable: true,
    ...(Number.isFinite(seconds) && seconds >= 0
      ? { retryAfterMs: Math.ceil(seconds * 1000) }
      : {}),
    message,
  };
}

/** Telegram webhooks in (secret-token header, `message` updates with text or caption), sendMessage replies out. */
export const telegramAdapter: PlatformAdapter = {
  name: "telegram",
  requiredEnv: ["TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN"],
  maxMessageChars: 4096,
  asyncDelivery: false,
  async verify(request, env) {
    const given = request.headers.get(_HEADER);
    if (given === null || given === "") return `missing ${_HEADER} header`;
    const ok = await _secretEquals(given, env.TELEGRAM_WEBHOOK_SECRET ?? "");
    return ok ? null : `${_HEADER} does not match the configured secret`;
  },
  parse: _parseUpdate,
  send: _sendMessage,
};

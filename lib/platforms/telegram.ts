// Telegram Bot API adapter: secret-token check, update parsing, sendMessage replies; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  approvalClickText,
  type Choice,
  type ClickAnswer,
  type Ingress,
  isChoiceData,
  type OutgoingFile,
  parseJsonBody,
  type PartSend,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type PreviewResult,
  type RawRequest,
  type SendResult,
} from "../chat/mod.ts";
import { apiRoot, detail, ignore, jsonField, sendRequest, TELEGRAM_WAIT_FROM } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { fetchTelegramMedia, telegramMedia } from "./telegram_media.ts";
import { constantTimeEquals, log } from "../runtime/mod.ts";

const _HEADER = "X-Telegram-Bot-Api-Secret-Token";
const _DEFAULT_API_ROOT = "https://api.telegram.org";
const _TOKEN = /^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _user = z.lazy(() =>
  z.looseObject({
    id: z.number().int(),
    is_bot: z.boolean().optional(),
    username: z.string().optional(),
    first_name: z.string().optional(),
  })
);

const _chat = z.lazy(() =>
  z.looseObject({
    id: z.number().int(),
    type: z.string().optional(),
    title: z.string().optional(),
    username: z.string().optional(),
    first_name: z.string().optional(),
  })
);

const _message = z.lazy(() =>
  z.looseObject({
    message_id: z.number().int(),
    chat: _chat,
    from: _user.optional(),
    sender_chat: _chat.optional(),
    message_thread_id: z.number().int().optional(),
    is_topic_message: z.boolean().optional(),
    is_automatic_forward: z.boolean().optional(),
    text: z.string().optional(),
    caption: z.string().optional(),
  })
);

const _update = z.lazy(() => z.looseObject({ update_id: z.number().int() }));

/** A button click; `message` is the bot's message that carried the button. */
const _callbackQuery = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    from: _user,
    message: _message.optional(),
    data: z.string().optional(),
  })
);

/** Where a Telegram reply goes: the chat (id or @username), the topic (forums only) and the message answered. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("telegram"),
    chat_id: z.union([z.number().int(), z.string().min(1)]),
    message_id: z.number().int().optional(),
    message_thread_id: z.number().int().optional(),
  })
);

/** A Telegram reply target, as stored with the message. */
export type TelegramTarget = z.infer<typeof _target>;

function _displayName(chat: z.infer<typeof _chat>): string {
  return chat.title ?? chat.username ?? chat.first_name ?? "";
}

function _parseUpdate(request: RawRequest, env: PlatformEnv): Ingress<TelegramTarget> {
  const update = _update.safeParse(parseJsonBody(request.body));
  if (!update.success) return ignore();
  if ("callback_query" in update.data) return _parseCallback(update.data.callback_query);
  // edited_message, channel_post, my_chat_member, …: acknowledged, no turn.
  if (!("message" in update.data)) return ignore();
  const parsed = _message.safeParse(update.data.message);
  if (!parsed.success) return ignore();
  const message = parsed.data;
  if (message.is_automatic_forward) return ignore();
  const text = message.text || message.caption || "";
  // Media are announced, never fetched here: the turn fetches them (`fetchMedia`).
  const { media, album } = telegramMedia(update.data.message);
  if (!text && !media.length) return ignore(); // Service messages: joins, pins, titles.

  const { chat } = message;
  // An anonymous group admin posts as the group itself, with the placeholder bot in `from`.
  const anonymousAdmin = message.sender_chat !== undefined && message.sender_chat.id === chat.id;
  if (!anonymousAdmin && (!message.from || message.from.is_bot)) return ignore();
  const sender = anonymousAdmin
    ? { id: chat.id, name: _displayName(chat) }
    : { id: message.from!.id, name: message.from!.username ?? message.from!.first_name ?? "" };

  const topic = message.is_topic_message === true ? message.message_thread_id : undefined;
  const sessionKey = _sessionKey(chat, topic);
  const botId = _botId(env);
  const reply: TelegramTarget = {
    platform: "telegram",
    chat_id: chat.id,
    message_id: message.message_id,
    ...(topic === undefined ? {} : { message_thread_id: topic }),
  };
  return {
    kind: "message",
    message: platformEvent("telegram", {
      sessionKey,
      deliveryKey: botId ? `tg:${botId}:${update.data.update_id}` : `tg:${update.data.update_id}`,
      text,
      ...(media.length ? { media } : {}),
      ...(album ? { album } : {}),
      context: {
        chat_id: String(chat.id),
        chat_name: _displayName(chat),
        thread_id: topic === undefined ? "" : String(topic),
        user_id: String(sender.id),
        user_name: sender.name,
        message_id: String(message.message_id),
      },
      reply,
      sender: {
        user: String(sender.id),
        name: sender.name,
        // Older payloads lack `type`: a private chat's id is the user's, always positive.
        direct: chat.type === undefined ? chat.id > 0 : chat.type === "private",
      },
    }),
  };
}

/** The session a message in `chat` (and topic) belongs to. */
function _sessionKey(chat: z.infer<typeof _chat>, topic: number | undefined): string {
  return topic === undefined ? `telegram:${chat.id}` : `telegram:${chat.id}:${topic}`;
}

/** A click on one of baton's inline buttons: its session is the chat (and topic) of the question. */
function _parseCallback(raw: unknown): Ingress<TelegramTarget> {
  const parsed = _callbackQuery.safeParse(raw);
  if (!parsed.success) return ignore();
  const { id, from, message, data } = parsed.data;
  // Another bot's buttons (inline mode) or a question too old to carry its chat: not baton's.
  if (!message || !isChoiceData(data) || from.is_bot) return ignore();
  const { chat } = message;
  const topic = message.is_topic_message === true ? message.message_thread_id : undefined;
  const name = from.username ?? from.first_name ?? "";
  return {
    kind: "choice",
    choice: platformEvent("telegram", {
      sessionKey: _sessionKey(chat, topic),
      deliveryKey: `tg:cb:${id}`,
      data,
      context: {
        chat_id: String(chat.id),
        chat_name: _displayName(chat),
        thread_id: topic === undefined ? "" : String(topic),
        user_id: String(from.id),
        user_name: name,
        message_id: String(message.message_id),
      },
      reply: {
        platform: "telegram",
        chat_id: chat.id,
        ...(topic === undefined ? {} : { message_thread_id: topic }),
      },
      sender: {
        user: String(from.id),
        name,
        direct: chat.type === undefined ? chat.id > 0 : chat.type === "private",
      },
      handle: id,
    }),
  };
}

// The bot's numeric id: the token's part before the colon (public, unlike the rest).
function _botId(env: PlatformEnv): string {
  const token = env.TELEGRAM_BOT_TOKEN ?? "";
  return _TOKEN.test(token) ? token.slice(0, token.indexOf(":")) : "";
}

async function _sendMessage(
  target: TelegramTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const payload: Record<string, unknown> = { chat_id: target.chat_id, text };
  if (target.message_thread_id !== undefined) payload.message_thread_id = target.message_thread_id;
  if (part.index === 0 && target.message_id !== undefined) {
    payload.reply_parameters = {
      message_id: target.message_id,
      allow_sending_without_reply: true,
    };
  }
  if (part.choices?.length) payload.reply_markup = _keyboard(part.choices);
  return await _botCall("sendMessage", payload, env, part.leaving) ?? {
    ok: false,
    status: 0,
    retryable: false,
    message: "TELEGRAM_BOT_TOKEN is not a bot token of the form <id>:<secret>",
  };
}

/** Images Telegram shows as a photo (`sendPhoto`, at most 10 MB); any other file is a document. */
const _PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);
const _PHOTO_MAX_BYTES = 10 * 1024 * 1024;

/**
 * A file part as Telegram media: `sendPhoto` for a JPEG, PNG or WebP image up to 10 MB, else
 * `sendDocument`, the bytes uploaded as multipart form data (no public URL needed), the caption
 * under it, replying to the user's message when it is the reply's first part.
 */
async function _sendFile(
  target: TelegramTarget,
  file: OutgoingFile,
  caption: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const photo = _PHOTO_TYPES.has(file.type) && file.size <= _PHOTO_MAX_BYTES;
  const form = new FormData();
  for (const [key, value] of Object.entries(_chatOf(target))) form.set(key, String(value));
  if (part.index === 0 && target.message_id !== undefined) {
    const reply = { message_id: target.message_id, allow_sending_without_reply: true };
    form.set("reply_parameters", JSON.stringify(reply));
  }
  if (caption) form.set("caption", caption.slice(0, 1024));
  const blob = new Blob([new Uint8Array(file.bytes)], { type: file.type });
  form.set(photo ? "photo" : "document", blob, file.name ?? (photo ? "image" : "file"));
  return await _botCall(photo ? "sendPhoto" : "sendDocument", form, env, part.leaving) ?? {
    ok: false,
    status: 0,
    retryable: false,
    message: "TELEGRAM_BOT_TOKEN is not a bot token of the form <id>:<secret>",
  };
}

/** Inline buttons, two to a row: four choices stay readable on a phone. */
function _keyboard(choices: readonly Choice[]) {
  const buttons = choices.map((c) => ({ text: c.label, callback_data: c.data }));
  const rows = [];
  for (let i = 0; i < buttons.length; i += 2) rows.push(buttons.slice(i, i + 2));
  return { inline_keyboard: rows };
}

/**
 * Answers a click with `answerCallbackQuery` (a short toast for the clicker alone, and the end of
 * the button's spinner). A failure is logged only: the click itself has been judged already.
 */
async function _answerChoice(
  choice: PlatformChoice<TelegramTarget>,
  answer: ClickAnswer,
  env: PlatformEnv,
): Promise<{ status: number; body: unknown }> {
  if (choice.handle) {
    const result = await _botCall("answerCallbackQuery", {
      callback_query_id: choice.handle,
      text: approvalClickText(answer).slice(0, 200),
    }, env);
    if (result && !result.ok) {
      log.warn("telegram: a click was not answered", { error: result.message });
    }
  }
  return { status: 200, body: { ok: true } };
}

/**
 * The one way to the Bot API: `method` with `payload` (JSON, or form data carrying a file), null
 * without a usable token. `leaving`:
 * a reply part's hook (see `PartSend`), absent off the reply path (presence, drafts, a click's
 * answer).
 */
async function _botCall(
  method: string,
  payload: Record<string, unknown> | FormData,
  env: PlatformEnv,
  leaving?: () => void,
): Promise<SendResult | null> {
  const token = env.TELEGRAM_BOT_TOKEN ?? "";
  if (!_TOKEN.test(token)) return null;
  const url = `${apiRoot(env, "TELEGRAM_API_ROOT", _DEFAULT_API_ROOT)}/bot${token}/${method}`;
  return await sendRequest(url, {
    method: "POST",
    // Form data sets its own multipart content type, boundary included.
    ...(payload instanceof FormData
      ? { body: payload }
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(payload) }),
  }, {
    api: "Telegram Bot API",
    leaving,
    // The token is in the URL: kept out of every message, whole or just its secret half.
    secrets: [token, token.slice(token.indexOf(":") + 1)],
    // The Bot API can answer 200 with {"ok": false}.
    refused: ({ body }) => jsonField(body, "ok") === false,
    waitFrom: TELEGRAM_WAIT_FROM,
    describe: ({ status, body }) =>
      `Telegram ${method} answered ${status}${detail(jsonField(body, "description"))}`,
  });
}

/** The chat (and topic) a call about `target` names. */
function _chatOf(target: TelegramTarget): Record<string, unknown> {
  return {
    chat_id: target.chat_id,
    ...(target.message_thread_id === undefined
      ? {}
      : { message_thread_id: target.message_thread_id }),
  };
}

/** The `typing` chat action: shown for about five seconds, or until the bot sends a message. */
async function _typing(target: TelegramTarget, env: PlatformEnv): Promise<boolean> {
  const result = await _botCall("sendChatAction", { ..._chatOf(target), action: "typing" }, env);
  return result?.ok === true;
}

/**
 * A draft of the reply (`sendMessageDraft`): an ephemeral preview the final `sendMessage`
 * replaces, so the exactly-once record is untouched. Private chats only (a user's chat id is
 * positive); groups and channels get none.
 */
async function _preview(
  target: TelegramTarget,
  text: string,
  draft: number,
  env: PlatformEnv,
): Promise<PreviewResult> {
  if (typeof target.chat_id !== "number" || target.chat_id <= 0) return "unsupported";
  const result = await _botCall("sendMessageDraft", {
    ..._chatOf(target),
    draft_id: draft,
    text,
  }, env);
  if (!result) return "unsupported";
  return result.ok ? "shown" : result.status === 429 ? "rate_limited" : "failed";
}

/**
 * Telegram webhooks in (secret-token header, `message` updates with text, media or both — an
 * album's pieces one turn — and clicks on baton's inline buttons), sendMessage replies out (a
 * question with its inline keyboard); media fetched inside the turn (telegram_media.ts).
 */
export const telegramAdapter: PlatformAdapter<TelegramTarget> = {
  name: "telegram",
  requiredEnv: ["TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN"],
  maxMessageChars: 4096,
  asyncDelivery: false,
  replyTarget: _target,
  async verify(request, env) {
    const given = request.headers.get(_HEADER);
    if (given === null || given === "") return `missing ${_HEADER} header`;
    const ok = await constantTimeEquals(given, env.TELEGRAM_WEBHOOK_SECRET ?? "");
    return ok ? null : `${_HEADER} does not match the configured secret`;
  },
  parse: _parseUpdate,
  send: _sendMessage,
  sendFile: _sendFile,
  answerChoice: _answerChoice,
  typing: _typing,
  preview: _preview,
  fetchMedia: fetchTelegramMedia,
};

// Telegram's driver: Bot API updates (typed by @grammyjs/types) with the webhook's secret-token header, sendMessage replies read back; Deno (workerd tests, fuzzer, chaos run).
import type { Message as TgMessage, Update } from "@grammyjs/types";
import { assertEquals } from "@std/assert";
import type { PlatformCall } from "../fake_platform.ts";
import type { Delivery, Driver, Message, Post } from "./mod.ts";

/** What Telegram vouches for a delivery with: the webhook's secret token, sent as is. */
export interface TelegramCredentials {
  secret: string;
}

const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";

/** The bot token the driver's deployment runs with: the fake file API serves files to it. */
export const telegramBotToken = TOKEN;
const SEND_PATH = `/bot${TOKEN}/sendMessage`;

let _chats = 0;
let _updates = 500_000;
let _messages = 1;

/** Telegram's driver: a private chat per `newChat()`, the sender its only member. */
export const telegramDriver: Driver<TelegramCredentials> = {
  name: "telegram",
  path: "/webhooks/telegram",
  vars: () => ({ TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN }),
  secretVars: ["TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN"],
  // A private chat's id is its user's id: positive.
  newChat: () => String(7_000_000 + ++_chats),
  session: (chat) => `telegram:${chat}`,
  turnText: (text) => text,
  // A private chat (its id is the sender's); a group when `group` asks (the sender then a member).
  shape({ chat, text, id, from, group, event }: Post): Update {
    const user = from ? Number(from.id) : Number(chat);
    const name = from?.name ?? "Alice";
    const message: TgMessage.TextMessage & Update.NonChannel = {
      message_id: Number(id),
      date: Math.floor(Date.now() / 1000),
      chat: group
        ? { id: Number(chat), type: "group", title: "Group" }
        : { id: Number(chat), type: "private", first_name: name, username: `alice${user}` },
      from: { id: user, is_bot: false, first_name: name, username: `alice${user}` },
      text,
    };
    return { update_id: event ? Number(event) : _updates++, message };
  },
  credentials: { secret: SECRET },
  stranger: { secret: "wrong-secret" },
  sign: (_body, { secret }) =>
    Promise.resolve({
      "content-type": "application/json",
      "x-telegram-bot-api-secret-token": secret,
    }),
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const messageId = id ?? String(_messages++);
    const body = JSON.stringify(telegramDriver.shape({ chat, text, id: messageId }));
    return {
      headers: await telegramDriver.sign(body, telegramDriver.credentials),
      body,
      id: messageId,
    };
  },
  tamper(delivery) {
    const { "x-telegram-bot-api-secret-token": _, ...unsigned } = delivery.headers;
    const forged = (secret: string) => ({
      ...delivery,
      headers: { ...unsigned, "x-telegram-bot-api-secret-token": secret },
    });
    return Promise.resolve([
      forged(telegramDriver.stranger.secret),
      forged(SECRET + "x"),
      forged(""),
      { ...delivery, headers: unsigned },
    ]);
  },
  // Telegram resends an update unchanged (same update_id) until it is acknowledged.
  redeliver: (delivery) => Promise.resolve(delivery),
  ack: { json: { ok: true } },
  sent(call: PlatformCall) {
    if (call.path !== SEND_PATH) return undefined;
    return { chat: String(call.body.chat_id), text: call.body.text };
  },
  partLimit: 4096,
  rateLimited: () => ({
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    },
  }),
  context: ({ chat }, delivery) => ({
    platform: "telegram",
    chat_id: chat,
    thread_id: "",
    user_id: chat,
    user_name: `alice${chat}`,
    session_key: `telegram:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    assertEquals([call.method, call.path], ["POST", SEND_PATH]);
    const { text: _, ...rest } = call.body;
    assertEquals(rest, {
      chat_id: JSON.parse(delivery.body).message.chat.id,
      reply_parameters: { message_id: Number(delivery.id), allow_sending_without_reply: true },
    });
  },
  expectParts(calls, delivery) {
    // Only the first part quotes the message; the rest follow it.
    assertEquals(calls[0].body.reply_parameters, {
      message_id: Number(delivery.id),
      allow_sending_without_reply: true,
    });
    assertEquals(
      calls.slice(1).map((c) => c.body.reply_parameters),
      calls.slice(1).map(() => undefined),
    );
  },
};

/** The media fields of a Telegram message, as @grammyjs/types has them. */
export type TelegramMediaFields = Partial<
  Pick<TgMessage, "photo" | "voice" | "audio" | "document" | "sticker" | "video_note">
>;

/**
 * A `message` update carrying media in `post.chat` (a private chat, its sender the chat's user):
 * `media`'s fields, `caption` (`post.text` when not empty), and `album` as its `media_group_id`.
 */
export function telegramMediaUpdate(
  post: Omit<Post, "text"> & { text?: string },
  media: TelegramMediaFields,
  album?: string,
): Update {
  const shaped = telegramDriver.shape({ ...post, text: "" }) as Update & {
    message: TgMessage.TextMessage;
  };
  const { text: _, ...bare } = shaped.message;
  const message = {
    ...bare,
    ...media,
    ...(post.text ? { caption: post.text } : {}),
    ...(album ? { media_group_id: album } : {}),
  } as TgMessage & Update.NonChannel;
  return { update_id: shaped.update_id, message };
}

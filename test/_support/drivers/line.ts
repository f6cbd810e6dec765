// LINE's driver: webhook callbacks (typed by @line/bot-sdk's webhook model) signed per LINE's base64 HMAC scheme, push replies read back; Deno (workerd tests, fuzzer, chaos run).
import type { webhook } from "@line/bot-sdk";
import { assert, assertEquals } from "@std/assert";
import { createHmac } from "node:crypto";
import type { Delivery, Driver, Message, Post } from "./mod.ts";

/** What LINE signs a callback with: the channel secret. */
export interface LineCredentials {
  secret: string;
}

const SECRET = "line-channel-secret-0123456789ab";
const TOKEN = "line-channel-access-token-value";
const PUSH_PATH = "/v2/bot/message/push";

/**
 * Base64 HMAC-SHA256 of the body with the channel secret: LINE's X-Line-Signature (the SDK's
 * `validateSignature` only checks one, so the driver computes it as LINE documents it).
 */
function _sign(body: string | Uint8Array, secret: string): string {
  return createHmac("sha256", secret).update(body).digest("base64");
}

/** `callback` as LINE sends it again: each event marked a redelivery, its reply token gone. */
export function lineRedelivery(callback: webhook.CallbackRequest): webhook.CallbackRequest {
  const events = callback.events.map((e) => {
    const { replyToken: _, ...rest } = e as webhook.MessageEvent;
    return { ...rest, deliveryContext: { isRedelivery: true } } as webhook.Event;
  });
  return { ...callback, events };
}

let _chats = 0;
let _events = 0;

/** LINE's driver: a 1:1 chat with a user `U…` per `newChat()`. */
export const lineDriver: Driver<LineCredentials> = {
  name: "line",
  path: "/webhooks/line",
  vars: () => ({ LINE_CHANNEL_SECRET: SECRET, LINE_CHANNEL_ACCESS_TOKEN: TOKEN }),
  secretVars: ["LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN"],
  newChat: () => `U${String(++_chats).padStart(32, "d")}`,
  session: (chat) => `line:user:${chat}`,
  turnText: (text) => text,
  // A text message from user `chat`; in a group (`group`: `chat` is the group id) from `from`.
  shape({ chat, text, id, from, group, mention, event }: Post): webhook.CallbackRequest {
    const n = ++_events;
    const user = from?.id ?? chat;
    const message: webhook.TextMessageContent = {
      type: "text",
      id,
      quoteToken: `q${n}`,
      text: mention ? `@bot ${text}` : text,
      ...(mention
        ? { mention: { mentionees: [{ index: 0, length: 4, type: "user", isSelf: true }] } }
        : {}),
    };
    const messageEvent: webhook.MessageEvent = {
      type: "message",
      mode: "active",
      timestamp: Date.now(),
      webhookEventId: event ?? `01HDRIVER${String(n).padStart(17, "0")}`,
      deliveryContext: { isRedelivery: false },
      source: group
        ? { type: "group", groupId: chat, userId: user }
        : { type: "user", userId: user },
      replyToken: crypto.randomUUID().replaceAll("-", ""),
      message,
    };
    return { destination: "Ubot0000000000", events: [messageEvent] };
  },
  credentials: { secret: SECRET },
  stranger: { secret: "not-the-secret" },
  sign: (body, { secret }) =>
    Promise.resolve({
      "content-type": "application/json",
      "x-line-signature": _sign(body, secret),
    }),
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const messageId = id ?? `46878957789${String(_events + 1).padStart(6, "0")}`;
    const body = JSON.stringify(lineDriver.shape({ chat, text, id: messageId }));
    return { headers: await lineDriver.sign(body, lineDriver.credentials), body, id: messageId };
  },
  tamper(delivery) {
    const forged = (signature: string | null) => {
      const { "x-line-signature": _, ...unsigned } = delivery.headers;
      return {
        ...delivery,
        headers: signature === null ? unsigned : { ...unsigned, "x-line-signature": signature },
      };
    };
    return Promise.resolve([
      forged(_sign(delivery.body, lineDriver.stranger.secret)),
      forged("AAAA"),
      forged(""),
      forged(null),
    ]);
  },
  // LINE marks a redelivery in the event and drops its reply token; the event id stays.
  async redeliver(delivery) {
    const body = JSON.stringify(lineRedelivery(JSON.parse(delivery.body)));
    return { headers: await lineDriver.sign(body, lineDriver.credentials), body, id: delivery.id };
  },
  ack: { json: { ok: true } },
  sent(call) {
    if (call.path !== PUSH_PATH) return undefined;
    return {
      chat: call.body.to,
      text: call.body.messages[0].text,
      key: call.headers.get("x-line-retry-key") ?? undefined,
    };
  },
  partLimit: 5000,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { message: "Too Many Requests" },
  }),
  context: ({ chat }, delivery) => ({
    platform: "line",
    chat_id: chat,
    thread_id: "",
    user_id: chat,
    user_name: chat,
    session_key: `line:user:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    assertEquals(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    assert(/^[0-9a-f-]{36}$/.test(call.headers.get("x-line-retry-key") ?? ""));
    const to = JSON.parse(delivery.body).events[0].source.userId;
    assertEquals(call.body, { to, messages: [{ type: "text", text: call.body.messages[0].text }] });
  },
};

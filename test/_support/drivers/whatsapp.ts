// WhatsApp's driver: Cloud API `messages` notifications in the shape of Meta's published samples, signed per Meta's X-Hub-Signature-256 HMAC scheme, Graph replies read back; Deno (workerd tests, fuzzer, chaos run).
import { assertEquals } from "@std/assert";
import { createHmac } from "node:crypto";
import type { Delivery, Driver, Message, Post } from "./mod.ts";

const APP_SECRET = "wa-app-secret-0123456789abcdef";
const VERIFY_TOKEN = "wa-verify-token_42";
const ACCESS_TOKEN = "EAAGwa-access-token-value";
/** The business number's id every notification is for (baton checks it against its own). */
export const WHATSAPP_PHONE_ID = "106540352242922";
const PHONE_ID = WHATSAPP_PHONE_ID;

/** What Meta signs a notification with: the app secret. */
export interface WhatsappCredentials {
  secret: string;
}
const SEND_PATH = `/${PHONE_ID}/messages`;

/** `sha256=` + hex HMAC-SHA256 of the body with the app secret (Meta ships no signer). */
function _sign(body: string | Uint8Array, secret: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

let _chats = 0;
let _messages = 0;

/** WhatsApp's driver: a customer's number per `newChat()`, writing to the business number. */
export const whatsappDriver: Driver<WhatsappCredentials> = {
  name: "whatsapp",
  path: "/webhooks/whatsapp",
  vars: () => ({
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    WHATSAPP_ACCESS_TOKEN: ACCESS_TOKEN,
    WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
  }),
  secretVars: [
    "WHATSAPP_APP_SECRET",
    "WHATSAPP_VERIFY_TOKEN",
    "WHATSAPP_ACCESS_TOKEN",
    "WHATSAPP_PHONE_NUMBER_ID",
  ],
  newChat: () => `1650555${String(++_chats).padStart(4, "0")}`,
  session: (chat) => `whatsapp:${PHONE_ID}:${chat}`,
  turnText: (text) => text,
  // Meta's sample text-message notification from customer `chat`, to the configured number.
  shape({ chat, text, id, from }: Post) {
    return {
      object: "whatsapp_business_account",
      entry: [{
        id: "102290129340398",
        changes: [{
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "15550783881", phone_number_id: PHONE_ID },
            contacts: [{ profile: { name: from?.name ?? "Sheena Nelson" }, wa_id: chat }],
            messages: [{
              from: chat,
              id,
              timestamp: String(Math.floor(Date.now() / 1000)),
              type: "text",
              text: { body: text },
            }],
          },
        }],
      }],
    };
  },
  credentials: { secret: APP_SECRET },
  stranger: { secret: "not-the-secret" },
  sign: (body, { secret }) =>
    Promise.resolve({
      "content-type": "application/json",
      "x-hub-signature-256": _sign(body, secret),
    }),
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const wamid = id ?? `wamid.DRIVER${++_messages}`;
    const body = JSON.stringify(whatsappDriver.shape({ chat, text, id: wamid }));
    return {
      headers: await whatsappDriver.sign(body, whatsappDriver.credentials),
      body,
      id: wamid,
    };
  },
  tamper(delivery) {
    const forged = (signature: string | null): Delivery => ({
      ...delivery,
      headers: signature === null
        ? { "content-type": "application/json" }
        : { "content-type": "application/json", "x-hub-signature-256": signature },
    });
    return Promise.resolve([
      forged(_sign(delivery.body, whatsappDriver.stranger.secret)),
      forged("sha256=" + "0".repeat(64)),
      forged(""),
      forged(null),
    ]);
  },
  // Meta retries the same notification.
  redeliver: (delivery) => Promise.resolve(delivery),
  ack: { json: { ok: true } },
  sent(call) {
    if (call.path !== SEND_PATH || call.body?.type !== "text") return undefined;
    return { chat: call.body.to, text: call.body.text.body };
  },
  partLimit: 4096,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { error: { message: "(#130429) Rate limit hit", code: 130429 } },
  }),
  accepted: () => ({ status: 200, body: { messages: [{ id: "wamid.OUT" }] } }),
  context: ({ chat }, delivery) => ({
    platform: "whatsapp",
    chat_id: chat,
    thread_id: "",
    user_id: chat,
    user_name: "Sheena Nelson",
    session_key: `whatsapp:${PHONE_ID}:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    assertEquals(call.headers.get("authorization"), `Bearer ${ACCESS_TOKEN}`);
    const to = JSON.parse(delivery.body).entry[0].changes[0].value.messages[0].from;
    assertEquals(call.body, {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to,
      type: "text",
      text: { body: call.body.text.body, preview_url: false },
      context: { message_id: delivery.id },
    });
  },
  expectParts(calls, delivery) {
    // Only the first part quotes the customer's message.
    assertEquals(calls[0].body.context, { message_id: delivery.id });
    assertEquals(calls.slice(1).map((c) => c.body.context), calls.slice(1).map(() => undefined));
  },
};

/** The media kinds of a Cloud API message (`type`), each an object naming its media `id`. */
export type WhatsappMediaType = "image" | "audio" | "document" | "sticker" | "video";

/**
 * A media message notification in the shape of Meta's published samples: `type` and its object
 * (`{ id, mime_type, sha256, caption?, filename?, voice? }`), the caption `post.text` when not
 * empty (images, videos and documents carry one).
 */
export function whatsappMediaMessage(
  post: Post,
  type: WhatsappMediaType,
  media: { id: string; mime_type: string; filename?: string; voice?: boolean },
) {
  const shaped = whatsappDriver.shape(post) as {
    object: string;
    entry: {
      id: string;
      changes: {
        field: string;
        value: { messages: Record<string, unknown>[] } & Record<string, unknown>;
      }[];
    }[];
  };
  const value = shaped.entry[0].changes[0].value;
  const { text: _, ...message } = value.messages[0];
  const captioned = post.text && type !== "audio" && type !== "sticker";
  const item = { sha256: "0".repeat(64), ...media, ...(captioned ? { caption: post.text } : {}) };
  return {
    ...shaped,
    entry: [{
      ...shaped.entry[0],
      changes: [{
        ...shaped.entry[0].changes[0],
        value: { ...value, messages: [{ ...message, type, [type]: item }] },
      }],
    }],
  };
}

/** The access token the driver's deployment runs with: the fake Graph API serves media to it. */
export const whatsappAccessToken = ACCESS_TOKEN;

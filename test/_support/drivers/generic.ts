// The generic webhook's driver: `{session, text}` deliveries signed by the standardwebhooks package, answered with the reply itself; Deno (workerd tests, fuzzer, chaos run).
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { seconds, utf8 } from "./wire.ts";

/** What a Standard Webhooks sender signs with: the `whsec_` secret. */
export interface GenericCredentials {
  secret: string;
}

/**
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`: the standardwebhooks package's `sign` for
 * text; for bytes that are not UTF-8 (it only takes strings) the same scheme computed directly,
 * so the fuzzer's raw bytes still reach baton's parser under a valid signature.
 */
function _sign(secret: string, id: string, at: number, body: string | Uint8Array): string {
  const text = utf8(body);
  if (text !== undefined) return new Webhook(secret).sign(id, new Date(at * 1000), text);
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  return "v1," + createHmac("sha256", key).update(`${id}.${at}.`).update(body).digest("base64");
}

/**
 * The `whsec_` secret the workerd tests configure as WEBHOOK_SECRET (clients.ts re-exports it):
 * defined here so clients.ts can sign with this driver without an import cycle.
 */
export const GENERIC_SECRET = "whsec_" + btoa("baton-test-webhook-secret-32byte");
const WEBHOOK_SECRET = GENERIC_SECRET;

let _chats = 0;

/** The generic webhook's driver: a session name per `newChat()`; no platform API to reply to. */
export const genericDriver: Driver<GenericCredentials> = {
  name: "generic",
  path: "/webhooks/generic",
  vars: () => ({ WEBHOOK_SECRET }),
  secretVars: ["WEBHOOK_SECRET"],
  newChat: () => `driver-${++_chats}`,
  session: (chat) => `webhook:${chat}`,
  turnText: (text) => text,
  // `{session, text}`, and the sender's name when `from` gives one.
  shape: ({ chat, text, from }: Post) => ({
    session: chat,
    text,
    ...(from ? { user: from.id } : {}),
  }),
  credentials: { secret: WEBHOOK_SECRET },
  stranger: { secret: "whsec_" + btoa("some-other-secret-of-32-bytes!!!") },
  // The webhook-id is signed: `options.id` keeps a retry's.
  sign(body, { secret }, options = {}) {
    const id = options.id ?? `msg_${crypto.randomUUID()}`;
    const at = seconds(options.at);
    return Promise.resolve({
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(options.at ?? at),
      "webhook-signature": _sign(secret, id, at, body),
    });
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const msgId = id ?? `msg_${crypto.randomUUID()}`;
    const body = JSON.stringify(genericDriver.shape({ chat, text, id: msgId }));
    const headers = await genericDriver.sign(body, genericDriver.credentials, { id: msgId });
    return { headers, body, id: msgId };
  },
  async tamper(delivery) {
    const id = delivery.headers["webhook-id"];
    const forged = (signature: string) => ({
      ...delivery,
      headers: { ...delivery.headers, "webhook-signature": signature },
    });
    return [
      {
        ...delivery,
        headers: await genericDriver.sign(delivery.body, genericDriver.stranger, { id }),
      },
      forged("v1,AAAA"),
      forged(""),
    ];
  },
  // A sender retries under the same webhook-id, signed anew.
  redeliver: async (delivery) => ({
    ...delivery,
    headers: await genericDriver.sign(delivery.body, genericDriver.credentials, {
      id: delivery.headers["webhook-id"],
    }),
  }),
  ack: "reply",
  // Nothing goes to a platform: the reply is the webhook's answer.
  sent: () => undefined,
  partLimit: Infinity,
  rateLimited: () => ({ status: 429 }),
  context: ({ chat }, delivery) => ({
    platform: "webhook",
    chat_id: chat,
    thread_id: "",
    user_id: "",
    user_name: "",
    session_key: `webhook:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
};

// The generic webhook's driver: `{session, text}` deliveries signed by the standardwebhooks package, answered with the reply itself; Deno (tests only).
import { Webhook } from "standardwebhooks";
import { WEBHOOK_SECRET } from "../clients.ts";
import type { Delivery, Driver, Message } from "./mod.ts";

const _OTHER_SECRET = "whsec_" + btoa("some-other-secret-of-32-bytes!!!");

function _headers(id: string, body: string, secret = WEBHOOK_SECRET): Record<string, string> {
  const at = new Date();
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

let _chats = 0;

/** The generic webhook's driver: a session name per `newChat()`; no platform API to reply to. */
export const genericDriver: Driver = {
  name: "generic",
  path: "/webhooks/generic",
  vars: () => ({ WEBHOOK_SECRET }),
  secretVars: ["WEBHOOK_SECRET"],
  newChat: () => `driver-${++_chats}`,
  session: (chat) => `webhook:${chat}`,
  turnText: (text) => text,
  message({ chat, text, id }: Message): Promise<Delivery> {
    const msgId = id ?? `msg_${crypto.randomUUID()}`;
    const body = JSON.stringify({ session: chat, text });
    return Promise.resolve({ headers: _headers(msgId, body), body, id: msgId });
  },
  tamper(delivery) {
    const id = delivery.headers["webhook-id"];
    const forged = (signature: string) => ({
      ...delivery,
      headers: { ...delivery.headers, "webhook-signature": signature },
    });
    return Promise.resolve([
      { ...delivery, headers: _headers(id, delivery.body, _OTHER_SECRET) },
      forged("v1,AAAA"),
      forged(""),
    ]);
  },
  // A sender retries under the same webhook-id, signed anew.
  redeliver: (delivery) =>
    Promise.resolve({
      ...delivery,
      headers: _headers(delivery.headers["webhook-id"], delivery.body),
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

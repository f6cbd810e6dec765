// Twilio's driver: incoming-SMS form posts signed by twilio's own getExpectedTwilioSignature over PUBLIC_URL, Messages API replies read back; Deno (tests only).
import { assertEquals } from "@std/assert";
import twilio from "twilio";
import type { Delivery, Driver, Message } from "./mod.ts";

const SID = "AC" + "1234567890abcdef".repeat(2);
const TOKEN = "twilio-auth-token-0123456789abcd";
const PUBLIC = "https://sms.baton.example";
const URL_ = `${PUBLIC}/webhooks/twilio`;
const BOT = "+15005550006";
const SEND_PATH = `/2010-04-01/Accounts/${SID}/Messages.json`;

/** The X-Twilio-Signature Twilio computes for `params` posted to `url`. */
function _sign(params: URLSearchParams, token = TOKEN, url = URL_): string {
  return twilio.getExpectedTwilioSignature(token, url, Object.fromEntries(params));
}

function _post(signature: string | null): Record<string, string> {
  return {
    "content-type": "application/x-www-form-urlencoded",
    ...(signature === null ? {} : { "x-twilio-signature": signature }),
  };
}

let _chats = 0;
let _messages = 0;

/** Twilio's driver: a sender's phone number per `newChat()`, texting the bot's number. */
export const twilioDriver: Driver = {
  name: "twilio",
  path: "/webhooks/twilio",
  // Twilio signs the URL it calls: PUBLIC_URL names it, whatever port workerd listens on.
  vars: () => ({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, PUBLIC_URL: PUBLIC }),
  secretVars: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN"],
  newChat: () => `+1555${String(++_chats).padStart(7, "0")}`,
  session: (chat) => `twilio:${BOT}:${chat}`,
  turnText: (text) => text,
  message({ chat, text, id }: Message): Promise<Delivery> {
    const sid = id ?? "SM" + String(++_messages).padStart(32, "0");
    const params = new URLSearchParams({
      ToCountry: "US",
      SmsMessageSid: sid,
      NumMedia: "0",
      SmsSid: sid,
      SmsStatus: "received",
      Body: text,
      To: BOT,
      NumSegments: "1",
      MessageSid: sid,
      AccountSid: SID,
      From: chat,
      ApiVersion: "2010-04-01",
    });
    return Promise.resolve({
      headers: _post(_sign(params)),
      body: params.toString(),
      id: sid,
    });
  },
  tamper(delivery) {
    const params = new URLSearchParams(delivery.body);
    const forged = (signature: string | null) => ({
      ...delivery,
      headers: _post(signature),
    });
    return Promise.resolve([
      forged(_sign(params, "not-the-token")),
      // Signed over another URL than the one Twilio was told to call.
      forged(_sign(params, TOKEN, "http://localhost/webhooks/twilio")),
      forged("AAAA"),
      forged(""),
      forged(null),
    ]);
  },
  // Twilio retries the same form (same MessageSid).
  redeliver: (delivery) => Promise.resolve(delivery),
  // Empty TwiML: Twilio sends nothing back by itself.
  ack: { contentType: "text/xml", text: "<Response/>" },
  sent(call) {
    if (call.path !== SEND_PATH) return undefined;
    return { chat: call.body.To, text: call.body.Body };
  },
  partLimit: 1600,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { code: 20429, message: "Too Many Requests", status: 429 },
  }),
  accepted: () => ({ status: 201, body: { sid: "SM" + "9".repeat(32), status: "queued" } }),
  context: ({ chat }, delivery) => ({
    platform: "twilio",
    chat_id: chat,
    thread_id: "",
    user_id: chat,
    user_name: chat,
    session_key: `twilio:${BOT}:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    assertEquals(call.headers.get("authorization"), `Basic ${btoa(`${SID}:${TOKEN}`)}`);
    const from = new URLSearchParams(delivery.body).get("From");
    assertEquals(call.body, { To: from, From: BOT, Body: call.body.Body });
  },
};

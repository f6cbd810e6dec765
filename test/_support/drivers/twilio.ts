// Twilio's driver: incoming-SMS form posts signed by twilio's own getExpectedTwilioSignature over PUBLIC_URL, Messages API replies read back; Deno (workerd tests, fuzzer, chaos run).
import { assertEquals } from "@std/assert";
import twilio from "twilio";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { encode } from "./wire.ts";

/** The account every message is for (baton checks the form's AccountSid against it). */
export const TWILIO_ACCOUNT_SID = "AC" + "1234567890abcdef".repeat(2);
/** The bot's number: every message texts it. */
export const TWILIO_NUMBER = "+15005550006";
const SID = TWILIO_ACCOUNT_SID;
const TOKEN = "twilio-auth-token-0123456789abcd";
const PUBLIC = "https://sms.baton.example";
const URL_ = `${PUBLIC}/webhooks/twilio`;
const BOT = TWILIO_NUMBER;

/** What Twilio signs a request with: the auth token, over the URL it was told to call. */
export interface TwilioCredentials {
  token: string;
  url: string;
}
const SEND_PATH = `/2010-04-01/Accounts/${SID}/Messages.json`;

/**
 * The X-Twilio-Signature twilio's getExpectedTwilioSignature computes for the form `body` posted
 * to `url` (a repeated field as the list it takes; bytes that are not UTF-8 read as U+FFFD).
 */
function _sign(body: string | Uint8Array, token: string, url: string): string {
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const params: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const had = params[k];
    params[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
  }
  return twilio.getExpectedTwilioSignature(token, url, params);
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
export const twilioDriver: Driver<TwilioCredentials> = {
  name: "twilio",
  path: "/webhooks/twilio",
  // Twilio signs the URL it calls: PUBLIC_URL names it, whatever port workerd listens on.
  vars: () => ({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, PUBLIC_URL: PUBLIC }),
  secretVars: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN"],
  newChat: () => `+1555${String(++_chats).padStart(7, "0")}`,
  session: (chat) => `twilio:${BOT}:${chat}`,
  turnText: (text) => text,
  // An incoming SMS from number `chat` to the bot's number: the fields Twilio posts.
  shape({ chat, text, id }: Post): Record<string, string> {
    return {
      ToCountry: "US",
      SmsMessageSid: id,
      NumMedia: "0",
      SmsSid: id,
      SmsStatus: "received",
      Body: text,
      To: BOT,
      NumSegments: "1",
      MessageSid: id,
      AccountSid: SID,
      From: chat,
      ApiVersion: "2010-04-01",
    };
  },
  form: true,
  credentials: { token: TOKEN, url: URL_ },
  stranger: { token: "not-the-token", url: URL_ },
  sign: (body, { token, url }) => Promise.resolve(_post(_sign(body, token, url))),
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const sid = id ?? "SM" + String(++_messages).padStart(32, "0");
    const body = encode(twilioDriver, twilioDriver.shape({ chat, text, id: sid }));
    return { headers: await twilioDriver.sign(body, twilioDriver.credentials), body, id: sid };
  },
  tamper(delivery) {
    const forged = (signature: string | null) => ({
      ...delivery,
      headers: _post(signature),
    });
    return Promise.resolve([
      forged(_sign(delivery.body, twilioDriver.stranger.token, URL_)),
      // Signed over another URL than the one Twilio was told to call.
      forged(_sign(delivery.body, TOKEN, "http://localhost/webhooks/twilio")),
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

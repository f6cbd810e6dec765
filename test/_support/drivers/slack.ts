// Slack's driver: Events API envelopes of direct messages (typed by @slack/types) signed per Slack's v0 HMAC scheme, chat.postMessage replies read back; Deno (tests only).
import type { GenericMessageEvent } from "@slack/types";
import { assertEquals, assertMatch } from "@std/assert";
import { createHmac } from "node:crypto";
import type { Delivery, Driver, Message } from "./mod.ts";

const SECRET = "slack-test-signing-secret-0123456789";
const TOKEN = "xoxb-test-bot-token";
const BOT = "UBATON";
const TEAM = "T0TEST";

let _chats = 0;
let _ts = 0;

/**
 * `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret: Slack's scheme
 * (@slack/bolt only verifies, so the driver computes it as Slack documents it).
 */
function _sign(secret: string, timestamp: string, body: string): string {
  return "v0=" + createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex");
}

function _signed(body: string, secret = SECRET): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    "content-type": "application/json",
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": _sign(secret, timestamp, body),
  };
}

/** Slack's driver: a direct message (an `im` channel `D…`) per `newChat()`, its user `U…`. */
export const slackDriver: Driver = {
  name: "slack",
  path: "/webhooks/slack",
  vars: () => ({ SLACK_SIGNING_SECRET: SECRET, SLACK_BOT_TOKEN: TOKEN }),
  secretVars: ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"],
  newChat: () => `D0DRV${String(++_chats).padStart(5, "0")}`,
  session: (chat) => `slack:${TEAM}:${chat}`,
  turnText: (text) => text,
  message({ chat, text, id }: Message): Promise<Delivery> {
    const ts = id ?? `1700000000.${String(++_ts).padStart(6, "0")}`;
    const event: GenericMessageEvent = {
      type: "message",
      subtype: undefined,
      user: `U${chat.slice(1)}`,
      text,
      ts,
      event_ts: ts,
      channel: chat,
      channel_type: "im",
      team: TEAM,
    };
    const envelope = {
      token: "legacy",
      team_id: TEAM,
      api_app_id: "A0TEST",
      type: "event_callback",
      event_id: `Ev${crypto.randomUUID().replaceAll("-", "").slice(0, 10).toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: TEAM, user_id: BOT, is_bot: true, is_enterprise_install: false }],
      event,
    };
    const body = JSON.stringify(envelope);
    return Promise.resolve({ headers: _signed(body), body, id: ts });
  },
  tamper(delivery) {
    const forged = (signature: string) => ({
      ...delivery,
      headers: { ...delivery.headers, "x-slack-signature": signature },
    });
    return Promise.resolve([
      { ...delivery, headers: _signed(delivery.body, "not-the-secret") },
      forged("v0=" + "00".repeat(32)),
      forged("v0=not-hex"),
      forged(""),
    ]);
  },
  // Slack retries the same event (same body) with X-Slack-Retry-Num, re-signed at its new time.
  redeliver: (delivery) =>
    Promise.resolve({
      ...delivery,
      headers: {
        ..._signed(delivery.body),
        "x-slack-retry-num": "1",
        "x-slack-retry-reason": "http_timeout",
      },
    }),
  ack: { json: { ok: true } },
  sent(call) {
    if (call.path !== "/api/chat.postMessage") return undefined;
    return { chat: call.body.channel, text: call.body.text };
  },
  partLimit: 40000,
  rateLimited: () => ({
    status: 429,
    body: { ok: false, error: "ratelimited" },
    headers: { "retry-after": "1" },
  }),
  context: ({ chat }, delivery) => ({
    platform: "slack",
    chat_id: chat,
    thread_id: "",
    user_id: `U${chat.slice(1)}`,
    user_name: `U${chat.slice(1)}`,
    session_key: `slack:${TEAM}:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    assertEquals([call.method, call.path], ["POST", "/api/chat.postMessage"]);
    assertEquals(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    const { metadata, text: _, ...visible } = call.body;
    // A direct message is answered unthreaded.
    assertEquals(visible, { channel: JSON.parse(delivery.body).event.channel });
    // The part's name rides along, invisible, so a send cut off by a crash can be looked for.
    assertEquals(metadata.event_type, "baton_part");
    assertMatch(metadata.event_payload.part, /^o[0-9]+-[0-9a-z]+$/);
  },
};

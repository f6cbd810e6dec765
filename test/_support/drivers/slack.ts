// Slack's driver: Events API envelopes of direct messages and channel app_mentions (typed by @slack/types and Bolt's envelope) signed per Slack's v0 HMAC scheme, chat.postMessage replies read back; Deno (workerd tests, fuzzer, chaos run).
import type { EnvelopedEvent } from "@slack/bolt";
import type { AppMentionEvent, FileShareMessageEvent, GenericMessageEvent } from "@slack/types";
import { assertEquals, assertMatch } from "@std/assert";
import { createHmac } from "node:crypto";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { seconds } from "./wire.ts";

const SECRET = "slack-test-signing-secret-0123456789";
const TOKEN = "xoxb-test-bot-token";
/** The bot's user id: what an app_mention mentions. */
export const SLACK_BOT = "UBATON";
const BOT = SLACK_BOT;
/** The workspace every delivery comes from (session keys name it). */
export const SLACK_TEAM = "T0TEST";
const TEAM = SLACK_TEAM;

/** What Slack signs a request with: the app's signing secret. */
export interface SlackCredentials {
  secret: string;
}

let _chats = 0;
let _ts = 0;

/**
 * `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret: Slack's scheme
 * (@slack/bolt only verifies, so the driver computes it as Slack documents it).
 */
function _sign(secret: string, timestamp: string, body: string | Uint8Array): string {
  return "v0=" + createHmac("sha256", secret)
    .update(`v0:${timestamp}:`).update(body).digest("hex");
}

/** Slack's driver: a direct message (an `im` channel `D…`) per `newChat()`, its user `U…`. */
export const slackDriver: Driver<SlackCredentials> = {
  name: "slack",
  path: "/webhooks/slack",
  vars: () => ({ SLACK_SIGNING_SECRET: SECRET, SLACK_BOT_TOKEN: TOKEN }),
  secretVars: ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"],
  newChat: () => `D0DRV${String(++_chats).padStart(5, "0")}`,
  session: (chat) => `slack:${TEAM}:${chat}`,
  turnText: (text) => text,
  // A direct message in an `im`; in a channel (`group`) an app_mention, threaded when `thread` is.
  shape({ chat, text, id, from, group, mention, thread, event }: Post) {
    const user = from?.id ?? `U${chat.slice(1)}`;
    const said = mention ? `<@${BOT}> ${text}` : text;
    const inner: GenericMessageEvent | AppMentionEvent = group
      ? {
        type: "app_mention",
        user,
        text: said,
        ts: id,
        event_ts: id,
        channel: chat,
        ...(thread && thread !== id ? { thread_ts: thread } : {}),
      }
      : {
        type: "message",
        subtype: undefined,
        user,
        text: said,
        ts: id,
        event_ts: id,
        channel: chat,
        channel_type: "im",
        team: TEAM,
      };
    const envelope: EnvelopedEvent<GenericMessageEvent | AppMentionEvent> = {
      token: "legacy",
      team_id: TEAM,
      api_app_id: "A0TEST",
      type: "event_callback",
      event_id: event ?? `Ev${crypto.randomUUID().replaceAll("-", "").slice(0, 10).toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{
        enterprise_id: null,
        team_id: TEAM,
        user_id: BOT,
        is_bot: true,
        is_enterprise_install: false,
      }],
      event: inner,
    };
    return envelope;
  },
  credentials: { secret: SECRET },
  stranger: { secret: "not-the-secret" },
  sign(body, { secret }, options = {}) {
    const timestamp = String(options.at ?? seconds(undefined));
    return Promise.resolve({
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": _sign(secret, timestamp, body),
    });
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const ts = id ?? `1700000000.${String(++_ts).padStart(6, "0")}`;
    const body = JSON.stringify(slackDriver.shape({ chat, text, id: ts }));
    return { headers: await slackDriver.sign(body, slackDriver.credentials), body, id: ts };
  },
  async tamper(delivery) {
    const forged = (signature: string) => ({
      ...delivery,
      headers: { ...delivery.headers, "x-slack-signature": signature },
    });
    return [
      { ...delivery, headers: await slackDriver.sign(delivery.body, slackDriver.stranger) },
      forged("v0=" + "00".repeat(32)),
      forged("v0=not-hex"),
      forged(""),
    ];
  },
  // Slack retries the same event (same body) with X-Slack-Retry-Num, re-signed at its new time.
  redeliver: async (delivery) => ({
    ...delivery,
    headers: {
      ...await slackDriver.sign(delivery.body, slackDriver.credentials),
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

/** A file on a Slack message, as @slack/types has it. */
export type SlackFile = NonNullable<FileShareMessageEvent["files"]>[number];

/**
 * A hosted file as Slack lists it on a message (`files[]`): `url_private` and
 * `url_private_download` at `url` (read with the bot token), its name, MIME type and size.
 */
export function slackFile(
  id: string,
  file: { url: string; name: string; mimetype: string; size: number; subtype?: string },
): SlackFile {
  return {
    id,
    created: Math.floor(Date.now() / 1000),
    name: file.name,
    title: file.name,
    mimetype: file.mimetype,
    filetype: file.name.split(".").pop() ?? "",
    pretty_type: file.mimetype,
    user: "U0SENDER",
    editable: false,
    size: file.size,
    mode: "hosted",
    is_external: false,
    external_type: null,
    is_public: false,
    public_url_shared: false,
    display_as_bot: false,
    username: null,
    url_private: file.url,
    url_private_download: file.url,
    permalink: `https://baton-test.slack.com/files/U0SENDER/${id}/${file.name}`,
    channels: null,
    groups: null,
    ...(file.subtype ? { subtype: file.subtype } : {}),
  } as SlackFile;
}

/**
 * A direct message carrying `files` (a `file_share` message event, as Slack sends an upload),
 * its text `post.text` ("" for files alone).
 */
export function slackFileShare(
  post: Post,
  files: SlackFile[],
): EnvelopedEvent<FileShareMessageEvent> {
  const envelope = slackDriver.shape(post) as EnvelopedEvent<GenericMessageEvent>;
  const { subtype: _, ...inner } = envelope.event;
  return {
    ...envelope,
    event: {
      ...inner,
      type: "message",
      subtype: "file_share",
      text: post.text,
      channel_type: "im",
      upload: true,
      display_as_bot: false,
      files,
    },
  };
}

/** The bot token the driver's deployment runs with: the fake file server serves files to it. */
export const slackBotToken = TOKEN;

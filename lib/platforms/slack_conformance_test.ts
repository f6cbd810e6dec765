// Conformance: the Slack adapter against @slack/bolt's request verification, @slack/types events and blocks, and @slack/web-api's client; Deno (tests only).
import { assert, assertEquals } from "@std/assert";
import {
  type BlockAction,
  type ButtonAction,
  type EnvelopedEvent,
  HTTPModuleFunctions,
  isValidSlackRequest,
  verifySlackRequest,
} from "@slack/bolt";
import type {
  ActionsBlock,
  AppMentionEvent,
  BotMessageEvent,
  Button,
  FileShareMessageEvent,
  GenericMessageEvent,
  MessageChangedEvent,
  MessageMetadata,
  PlainTextElement,
  SectionBlock,
} from "@slack/types";
import {
  type AssistantThreadsSetStatusArguments,
  type ChatDeleteArguments,
  type ChatPostEphemeralArguments,
  type ChatPostMessageArguments,
  type ChatUpdateArguments,
  type Logger,
  LogLevel,
  WebClient,
} from "@slack/web-api";
import { Buffer } from "node:buffer";
import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import {
  type Choice,
  type Ingress,
  type PartSend,
  type RawRequest,
  replyChannel,
} from "../chat/mod.ts";
import { signSlackRequest, slackAdapter, type SlackTarget } from "./slack.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { type AnyMemberOf, assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TOKEN = "xoxb-conformance-token";
const ENV = { SLACK_SIGNING_SECRET: SECRET, SLACK_BOT_TOKEN: TOKEN };
const NOW = 1_700_000_000;
const BOT = "U0BATONBOT";
const TEAM = "T0TEAM";

// ── signing, both sides ──────────────────────────────────────────────────────────────────────────

interface Delivery {
  body: string;
  signature: string;
  timestamp: string;
  contentType?: string;
  nowSeconds?: number;
}

async function delivery(
  body: string,
  opts: { timestamp?: number; secret?: string; contentType?: string; nowSeconds?: number } = {},
): Promise<Delivery> {
  const timestamp = opts.timestamp ?? NOW;
  const signature = await signSlackRequest({ secret: opts.secret ?? SECRET, timestamp, body });
  const { contentType, nowSeconds } = opts;
  return { body, signature, timestamp: String(timestamp), contentType, nowSeconds };
}

function raw(d: Delivery): RawRequest {
  return {
    headers: new Headers({
      "content-type": d.contentType ?? "application/json",
      "x-slack-signature": d.signature,
      "x-slack-request-timestamp": d.timestamp,
    }),
    body: new TextEncoder().encode(d.body),
    url: "https://baton.test/webhooks/slack",
    nowSeconds: d.nowSeconds ?? NOW,
  };
}

/** Whether Bolt's verifier accepts the delivery, on the same clock. */
function boltAccepts(d: Delivery): boolean {
  return isValidSlackRequest({
    signingSecret: SECRET,
    body: d.body,
    headers: {
      "x-slack-signature": d.signature,
      // Bolt's receivers pass the header through Number(); so does this.
      "x-slack-request-timestamp": Number(d.timestamp),
    },
    nowMilliseconds: (d.nowSeconds ?? NOW) * 1000,
  });
}

async function batonAccepts(d: Delivery): Promise<boolean> {
  return await slackAdapter.verify(raw(d), ENV) === null;
}

// ── payloads as Slack's packages declare them ────────────────────────────────────────────────────

function envelope<E>(event: E, eventId = "Ev0CONFORM01"): EnvelopedEvent<E> {
  return {
    token: "legacy-verification-token",
    team_id: TEAM,
    api_app_id: "A0BATON",
    event,
    type: "event_callback",
    event_id: eventId,
    event_time: NOW,
    authorizations: [{ enterprise_id: null, team_id: TEAM, user_id: BOT, is_bot: true }],
    is_ext_shared_channel: false,
  };
}

const directMessage: GenericMessageEvent = {
  type: "message",
  subtype: undefined,
  event_ts: "1700000000.000200",
  team: TEAM,
  channel: "D0DIRECT",
  user: "U0ALICE",
  text: "hi in private",
  ts: "1700000000.000200",
  channel_type: "im",
  client_msg_id: "8f4c1a9e-6d2b-4a4e-9f7e-0f1d2c3b4a59",
  blocks: [{
    type: "rich_text",
    block_id: "x1",
    elements: [{ type: "rich_text_section", elements: [{ type: "text", text: "hi in private" }] }],
  }],
};

const mention: AppMentionEvent = {
  type: "app_mention",
  user: "U0ALICE",
  team: TEAM,
  text: `<@${BOT}> what is new?`,
  ts: "1700000000.000100",
  channel: "C0GENERAL",
  event_ts: "1700000000.000100",
  client_msg_id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
};

function parse(body: string, contentType = "application/json"): Promise<Ingress<SlackTarget>> {
  return delivery(body, { contentType }).then((d) => slackAdapter.parse(raw(d), ENV));
}

async function assertIgnored(body: string): Promise<void> {
  assertEquals(await parse(body), { kind: "respond", status: 200, body: { ok: true } });
}

// ── in: request verification, against Bolt ──────────────────────────────────────────────────────

Deno.test("slackAdapter.verify() accepts and refuses what @slack/bolt's verifySlackRequest does", async () => {
  const body = JSON.stringify(envelope(directMessage));
  const good = await delivery(body);
  // Bolt throws on a refusal: the signature baton makes is one Bolt itself accepts.
  verifySlackRequest({
    signingSecret: SECRET,
    body,
    headers: { "x-slack-signature": good.signature, "x-slack-request-timestamp": NOW },
    nowMilliseconds: NOW * 1000,
  });
  const tampered = body.replace("hi in private", "hi in privatE");
  const cases: [string, Delivery][] = [
    ["signed now", good],
    ["signed 299 s ago", await delivery(body, { timestamp: NOW - 299 })],
    ["signed 300 s ago", await delivery(body, { timestamp: NOW - 300 })],
    ["signed 301 s ago (stale)", await delivery(body, { timestamp: NOW - 301 })],
    ["signed an hour ago (stale)", await delivery(body, { timestamp: NOW - 3600 })],
    ["signed with another secret", await delivery(body, { secret: SECRET + "x" })],
    ["a body byte changed after signing", { ...good, body: tampered }],
    ["a byte appended to the body", { ...good, body: body + " " }],
    ["the timestamp header changed", { ...good, timestamp: String(NOW - 1) }],
    ["another signature version", { ...good, signature: "v1=" + good.signature.slice(3) }],
    ["the signature cut short", { ...good, signature: good.signature.slice(0, -2) }],
    ["an empty signature", { ...good, signature: "v0=" }],
    ["a timestamp that is not a number", { ...good, timestamp: "yesterday" }],
  ];
  for (const [name, d] of cases) {
    assertEquals(await batonAccepts(d), boltAccepts(d), name);
  }
  // The table covers both answers: a verifier that accepts everything, or nothing, fails it.
  assert(cases.some(([, d]) => boltAccepts(d)) && cases.some(([, d]) => !boltAccepts(d)));
});

Deno.test("slackAdapter.verify() also refuses future timestamps, which Bolt lets through", async () => {
  // Bolt checks only staleness; Slack signs the time it sends, so a timestamp from the future is a
  // forgery or a broken clock either way. Baton's window is ±300 s (platforms.md, Slack row).
  const body = JSON.stringify(envelope(directMessage));
  const future = await delivery(body, { timestamp: NOW + 301 });
  assertEquals(boltAccepts(future), true);
  assertEquals(await batonAccepts(future), false);
  const near = await delivery(body, { timestamp: NOW + 300 });
  assertEquals([boltAccepts(near), await batonAccepts(near)], [true, true]);
});

Deno.test("slackAdapter.verify() accepts the upper-case hex of the right MAC, which Bolt refuses", async () => {
  // Slack sends lower-case hex; Bolt compares strings, baton compares the MAC bytes. The same MAC
  // either way: baton's leniency admits no request Slack did not sign.
  const good = await delivery(JSON.stringify(envelope(directMessage)));
  const upper = { ...good, signature: "v0=" + good.signature.slice(3).toUpperCase() };
  assertEquals([boltAccepts(upper), await batonAccepts(upper)], [false, true]);
});

Deno.test("slackAdapter verify() and parse() take an interactivity form exactly as Bolt's receiver does", async () => {
  const click: BlockAction<ButtonAction> = {
    type: "block_actions",
    team: { id: TEAM, domain: "example" },
    user: { id: "U0ALICE", username: "alice", name: "alice", team_id: TEAM },
    api_app_id: "A0BATON",
    token: "legacy-verification-token",
    container: {
      type: "message",
      message_ts: "1700000050.000300",
      channel_id: "C0GENERAL",
      is_ephemeral: false,
      thread_ts: "1700000000.000100",
    },
    trigger_id: "1234567890123.1234567890123.abcdef0123456789abcdef0123456789",
    channel: { id: "C0GENERAL", name: "general" },
    message: {
      type: "message",
      user: BOT,
      ts: "1700000050.000300",
      thread_ts: "1700000000.000100",
      text: "Approval needed: shell ls",
    },
    response_url: "https://hooks.slack.com/actions/T0TEAM/1/abc",
    actions: [{
      type: "button",
      block_id: "baton_choices",
      action_id: "baton_choice_0",
      text: { type: "plain_text", text: "Approve once", emoji: true },
      value: "bt:a:3:0badcafe:o",
      action_ts: "1700000060.123456",
    }],
  };
  // Slack posts interactivity as a form with one field, `payload`, holding the JSON.
  const form = new URLSearchParams({ payload: JSON.stringify(click) }).toString();
  const contentType = "application/x-www-form-urlencoded";
  // Bolt's own receiver path checks the signature with the wall clock: sign with it.
  const now = Math.floor(Date.now() / 1000);
  const d = await delivery(form, { timestamp: now, nowSeconds: now, contentType });
  // Bolt's receiver reads a buffered Node request: its headers and raw body.
  const request = Object.assign(new IncomingMessage(new Socket()), { rawBody: Buffer.from(form) });
  request.headers = {
    "content-type": contentType,
    "x-slack-signature": d.signature,
    "x-slack-request-timestamp": d.timestamp,
  };
  // Throws unless Bolt's receiver accepts the request.
  await HTTPModuleFunctions.parseAndVerifyHTTPRequest({ signingSecret: SECRET }, request);
  assertEquals(HTTPModuleFunctions.parseHTTPRequestBody(request), click);
  assertEquals(await slackAdapter.verify(raw(d), ENV), null);
  const ingress = slackAdapter.parse(raw(d), ENV);
  assert(ingress.kind === "choice", JSON.stringify(ingress));
  assertEquals(ingress.choice.data, "bt:a:3:0badcafe:o");
  assertEquals(ingress.choice.sessionKey, `slack:${TEAM}:C0GENERAL:1700000000.000100`);
  assertEquals(ingress.choice.reply, {
    platform: "slack",
    channel: "C0GENERAL",
    thread_ts: "1700000000.000100",
  });
  assertEquals(ingress.choice.sender, {
    platform: "slack",
    user: `${TEAM}/U0ALICE`,
    name: "alice",
    direct: false,
  });
});

Deno.test("slackAdapter verify() and parse() start nothing from an ssl_check probe, smuggled payload or not", async () => {
  const probe = new URLSearchParams({
    ssl_check: "1",
    token: "legacy",
    payload: JSON.stringify({ type: "block_actions" }),
  }).toString();
  const request: RawRequest = {
    headers: new Headers({ "content-type": "application/x-www-form-urlencoded" }),
    body: new TextEncoder().encode(probe),
    url: "https://baton.test/webhooks/slack",
    nowSeconds: NOW,
  };
  // Unsigned, as Bolt lets it through: and then only the empty answer, nothing parsed.
  assertEquals(await slackAdapter.verify(request, ENV), null);
  assertEquals(slackAdapter.parse(request, ENV), { kind: "respond", status: 200, body: {} });
});

// ── in: Events API envelopes ─────────────────────────────────────────────────────────────────────

Deno.test("slackAdapter.parse() answers url_verification with the body Bolt's receiver answers", async () => {
  const handshake = {
    token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
    challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    type: "url_verification",
  };
  let written = "";
  const res = { writeHead: () => res, end: (chunk: string) => void (written = chunk) };
  // deno-lint-ignore no-explicit-any -- Bolt's response builder takes a Node response; it calls these two.
  HTTPModuleFunctions.buildUrlVerificationResponse(res as any, handshake);
  const ingress = await parse(JSON.stringify(handshake));
  assert(ingress.kind === "respond");
  assertEquals(ingress.body, JSON.parse(written));
});

Deno.test("slackAdapter.parse() turns a GenericMessageEvent in a DM into an unthreaded turn", async () => {
  const ingress = await parse(JSON.stringify(envelope(directMessage)));
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message.sessionKey, `slack:${TEAM}:D0DIRECT`);
  assertEquals(ingress.message.text, "hi in private");
  assertEquals(ingress.message.reply, { platform: "slack", channel: "D0DIRECT" });
  assertEquals(ingress.message.sender, {
    platform: "slack",
    user: `${TEAM}/U0ALICE`,
    name: "U0ALICE",
    direct: true,
  });
  const threaded: GenericMessageEvent = {
    ...directMessage,
    ts: "1700000100.000400",
    event_ts: "1700000100.000400",
    thread_ts: "1700000000.000200",
    parent_user_id: "U0ALICE",
  };
  const reply = await parse(JSON.stringify(envelope(threaded)));
  assert(reply.kind === "message");
  assertEquals(reply.message.sessionKey, `slack:${TEAM}:D0DIRECT:1700000000.000200`);
});

Deno.test("slackAdapter.parse() turns an AppMentionEvent into a turn in its thread, mention stripped", async () => {
  const ingress = await parse(JSON.stringify(envelope(mention)));
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message.text, "what is new?");
  assertEquals(ingress.message.sessionKey, `slack:${TEAM}:C0GENERAL:1700000000.000100`);
  assertEquals(ingress.message.reply, {
    platform: "slack",
    channel: "C0GENERAL",
    thread_ts: "1700000000.000100",
  });
  assertEquals(ingress.message.sender.direct, false);
  // Slack sends a channel's plain message event too (message.channels): the mention answers it.
  const twin: GenericMessageEvent = {
    ...directMessage,
    channel: "C0GENERAL",
    channel_type: "channel",
    text: mention.text,
    ts: mention.ts,
  };
  await assertIgnored(JSON.stringify(envelope(twin)));
});

Deno.test("slackAdapter.parse() starts no turn for a BotMessageEvent or the bot's own message", async () => {
  const bot: BotMessageEvent = {
    type: "message",
    subtype: "bot_message",
    event_ts: "1700000001.000100",
    channel: "D0DIRECT",
    channel_type: "im",
    ts: "1700000001.000100",
    text: "I am another app",
    bot_id: "B0OTHER",
    username: "other",
  };
  await assertIgnored(JSON.stringify(envelope(bot)));
  // Baton's own replies come back as messages with its bot_id (and its user id).
  const own: GenericMessageEvent = { ...directMessage, user: BOT, bot_id: "B0BATON" };
  await assertIgnored(JSON.stringify(envelope(own)));
});

Deno.test("slackAdapter.parse() starts no second turn for a MessageChangedEvent", async () => {
  const edited: MessageChangedEvent = {
    type: "message",
    subtype: "message_changed",
    event_ts: "1700000200.000500",
    hidden: true,
    channel: "D0DIRECT",
    channel_type: "im",
    ts: "1700000200.000500",
    message: {
      ...directMessage,
      text: "hi in private (edited)",
      edited: { user: "U0ALICE", ts: "1" },
    },
    previous_message: directMessage,
  };
  await assertIgnored(JSON.stringify(envelope(edited)));
});

Deno.test("slackAdapter.parse() starts a turn for a FileShareMessageEvent: its comment, and its file announced by its download link (nothing fetched)", async () => {
  // What Slack sends when a user shares a file in the DM, with a comment.
  const share: FileShareMessageEvent = {
    type: "message",
    subtype: "file_share",
    text: "what is in this?",
    files: [{
      id: "F0FILE",
      created: NOW,
      name: "notes.txt",
      title: "notes.txt",
      mimetype: "text/plain",
      filetype: "text",
      pretty_type: "Plain Text",
      user: "U0ALICE",
      editable: true,
      size: 12,
      mode: "hosted",
      is_external: false,
      external_type: "",
      is_public: false,
      public_url_shared: false,
      display_as_bot: false,
      username: "",
      permalink: "https://example.slack.com/files/U0ALICE/F0FILE/notes.txt",
      channels: [],
      groups: [],
      url_private: "https://files.slack.com/files-pri/T0TEAM-F0FILE/notes.txt",
      url_private_download: "https://files.slack.com/files-pri/T0TEAM-F0FILE/download/notes.txt",
    }],
    upload: true,
    display_as_bot: false,
    user: "U0ALICE",
    ts: "1700000300.000600",
    channel: "D0DIRECT",
    channel_type: "im",
    event_ts: "1700000300.000600",
  };
  const ingress = await parse(JSON.stringify(envelope(share)));
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message.text, "what is in this?");
  assertEquals(ingress.message.media, [{
    platform: "slack",
    file: "https://files.slack.com/files-pri/T0TEAM-F0FILE/download/notes.txt",
    kind: "document",
    name: "notes.txt",
    type: "text/plain",
    size: 12,
  }]);
});

// ── out: Web API arguments, checked against @slack/web-api and @slack/types ─────────────────────

const POST_MESSAGE: KeyTable<AnyMemberOf<ChatPostMessageArguments>> = {
  token: true,
  channel: true,
  text: true,
  blocks: true,
  attachments: true,
  markdown_text: true,
  thread_ts: true,
  reply_broadcast: true,
  as_user: true,
  icon_emoji: true,
  icon_url: true,
  username: true,
  parse: true,
  link_names: true,
  metadata: true,
  unfurl_links: true,
  unfurl_media: true,
  mrkdwn: true,
};

const UPDATE: KeyTable<AnyMemberOf<ChatUpdateArguments>> = {
  channel: true,
  text: true,
  blocks: true,
  attachments: true,
  markdown_text: true,
  ts: true,
  token: true,
  as_user: true,
  link_names: true,
  metadata: true,
  parse: true,
  file_ids: true,
  reply_broadcast: true,
};

const POST_EPHEMERAL: KeyTable<AnyMemberOf<ChatPostEphemeralArguments>> = {
  token: true,
  channel: true,
  text: true,
  blocks: true,
  attachments: true,
  markdown_text: true,
  user: true,
  as_user: true,
  icon_emoji: true,
  icon_url: true,
  username: true,
  parse: true,
  link_names: true,
  thread_ts: true,
};

const DELETE: KeyTable<ChatDeleteArguments> = {
  channel: true,
  ts: true,
  as_user: true,
  token: true,
};

const SET_STATUS: KeyTable<AssistantThreadsSetStatusArguments> = {
  token: true,
  channel_id: true,
  status: true,
  thread_ts: true,
  loading_messages: true,
  icon_emoji: true,
  icon_url: true,
  username: true,
};

const METADATA: KeyTable<MessageMetadata> = { event_type: true, event_payload: true };
const SECTION: KeyTable<SectionBlock> = {
  type: true,
  block_id: true,
  text: true,
  fields: true,
  accessory: true,
  expand: true,
};
const ACTIONS: KeyTable<ActionsBlock> = { type: true, block_id: true, elements: true };
const BUTTON: KeyTable<Button> = {
  type: true,
  action_id: true,
  confirm: true,
  text: true,
  value: true,
  url: true,
  style: true,
  accessibility_label: true,
};
const PLAIN_TEXT: KeyTable<PlainTextElement> = { type: true, text: true, emoji: true };
const STYLES: Record<NonNullable<Button["style"]>, true> = { primary: true, danger: true };

/** Slack's documented limits (chat.postMessage, Block Kit as @slack/types states them). */
const LIMIT = {
  text: 40_000,
  sectionText: 3000,
  buttonText: 75,
  actionId: 255,
  blockId: 255,
  buttonValue: 2000,
  actionsElements: 25,
  blocks: 50,
};

/** A timestamp as Slack names messages: seconds "." microseconds. */
const TS = /^[0-9]+\.[0-9]+$/;

function methodOf(call: FetchCall): string {
  const match = /^https:\/\/slack\.com\/api\/([a-zA-Z.]+)$/.exec(call.url);
  assert(match, `not a Web API URL: ${call.url}`);
  assertEquals(call.method, "POST");
  assertEquals(call.headers.get("authorization"), `Bearer ${TOKEN}`);
  assert(call.headers.get("content-type")?.startsWith("application/json"));
  return match[1];
}

function assertText(text: unknown): void {
  assert(typeof text === "string" && text.length > 0 && text.length <= LIMIT.text);
}

function assertMetadata(metadata: unknown): void {
  assertDeclaredKeys<MessageMetadata>("metadata", metadata, METADATA, [
    "event_type",
    "event_payload",
  ]);
  const { event_type, event_payload } = metadata as MessageMetadata;
  assert(/^[A-Za-z0-9_]+$/.test(event_type), `event_type ${event_type}`);
  assert(typeof event_payload === "object" && !Array.isArray(event_payload));
}

function assertPlainText(what: string, value: unknown, max: number): void {
  assertDeclaredKeys<PlainTextElement>(what, value, PLAIN_TEXT, ["type", "text"]);
  const { type, text } = value as PlainTextElement;
  assertEquals(type, "plain_text");
  assert(text.length >= 1 && text.length <= max, `${what}: ${text.length} characters`);
}

function assertBlocks(blocks: unknown): void {
  assert(Array.isArray(blocks) && blocks.length >= 1 && blocks.length <= LIMIT.blocks);
  for (const block of blocks) {
    assert(typeof block.block_id !== "string" || block.block_id.length <= LIMIT.blockId);
    if (block.type === "section") {
      assertDeclaredKeys<SectionBlock>("section", block, SECTION, ["type"]);
      assertPlainText("section text", block.text, LIMIT.sectionText);
    } else if (block.type === "actions") {
      assertDeclaredKeys<ActionsBlock>("actions", block, ACTIONS, ["type", "elements"]);
      assert(block.elements.length >= 1 && block.elements.length <= LIMIT.actionsElements);
      for (const element of block.elements) {
        assertDeclaredKeys<Button>("button", element, BUTTON, ["type", "text"]);
        assertEquals(element.type, "button");
        assertPlainText("button text", element.text, LIMIT.buttonText);
        assert(element.action_id.length <= LIMIT.actionId);
        assert(element.value.length <= LIMIT.buttonValue);
        assert(element.style === undefined || element.style in STYLES);
      }
    } else {
      throw new Error(`a block baton does not build: ${block.type}`);
    }
  }
  const ids = blocks.flatMap((b) => b.elements ?? []).map((e: Button) => e.action_id);
  assertEquals(new Set(ids).size, ids.length, "action_ids are unique in a message");
}

/** Checks one captured Web API call's arguments against the method's declared arguments. */
function assertArguments(call: FetchCall): void {
  const method = methodOf(call);
  const body = call.body;
  switch (method) {
    case "chat.postMessage":
      assertDeclaredKeys<AnyMemberOf<ChatPostMessageArguments>>(method, body, POST_MESSAGE, [
        "channel",
        "text",
      ]);
      assertText(body.text);
      break;
    case "chat.update":
      assertDeclaredKeys<AnyMemberOf<ChatUpdateArguments>>(method, body, UPDATE, [
        "channel",
        "ts",
        "text",
      ]);
      assertText(body.text);
      assert(TS.test(body.ts));
      break;
    case "chat.postEphemeral":
      assertDeclaredKeys<AnyMemberOf<ChatPostEphemeralArguments>>(method, body, POST_EPHEMERAL, [
        "channel",
        "user",
        "text",
      ]);
      assertText(body.text);
      break;
    case "chat.delete":
      assertDeclaredKeys<ChatDeleteArguments>(method, body, DELETE, ["channel", "ts"]);
      assert(TS.test(body.ts));
      break;
    case "assistant.threads.setStatus":
      assertDeclaredKeys<AssistantThreadsSetStatusArguments>(method, body, SET_STATUS, [
        "channel_id",
        "thread_ts",
        "status",
      ]);
      assert(TS.test(body.thread_ts));
      break;
    default:
      throw new Error(`a Web API method the test does not know: ${method}`);
  }
  if ("thread_ts" in body) assert(typeof body.thread_ts === "string" && TS.test(body.thread_ts));
  if ("metadata" in body) assertMetadata(body.metadata);
  if ("blocks" in body) assertBlocks(body.blocks);
}

/** What @slack/web-api's own client logs and sends for the same call. */
async function replayThroughWebClient(
  call: FetchCall,
): Promise<{ warnings: string[]; sent: URLSearchParams; url: string; auth: string | null }> {
  const method = methodOf(call);
  const warnings: string[] = [];
  let level = LogLevel.WARN;
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => void warnings.push(msg.join(" ")),
    error: (...msg: unknown[]) => void warnings.push(msg.join(" ")),
    setLevel: (l) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
  let sent = new URLSearchParams();
  let url = "";
  let auth: string | null = null;
  const client = new WebClient(TOKEN, {
    logger,
    retryConfig: { retries: 0 },
    fetch: (input, init) => {
      url = String(input);
      auth = new Headers(init?.headers as HeadersInit).get("authorization");
      sent = new URLSearchParams(String(init?.body));
      return Promise.resolve(Response.json({ ok: true, ts: "1700000999.000100" }));
    },
  });
  // The method is one the official client names (it would be a typo or a retired method otherwise).
  const bound = method.split(".").reduce<unknown>(
    (at, key) => (at as Record<string, unknown> | undefined)?.[key],
    client,
  );
  assertEquals(typeof bound, "function", `WebClient has no ${method}`);
  await client.apiCall(method, call.body);
  return { warnings, sent, url, auth };
}

/** The client's form, decoded as the Web API decodes it, equals what baton sent as JSON. */
function assertSameArguments(sent: URLSearchParams, body: Record<string, unknown>): void {
  const decoded = Object.fromEntries(
    [...sent.entries()].map(([k, v]) => [k, typeof body[k] === "object" ? JSON.parse(v) : v]),
  );
  const expected = Object.fromEntries(
    Object.entries(body).map(([k, v]) => [k, typeof v === "object" ? v : String(v)]),
  );
  assertEquals(decoded, expected);
}

const OK = () => Response.json({ ok: true, ts: "1700000999.000100", channel: "C0GENERAL" });

const thread: SlackTarget = {
  platform: "slack",
  channel: "C0GENERAL",
  thread_ts: "1700000000.000100",
};

const choices: Choice[] = [
  { label: "Approve once", data: "bt:a:123456789012345:0badcafe:o", style: "primary" },
  { label: "This session", data: "bt:a:123456789012345:0badcafe:s" },
  { label: "Always", data: "bt:a:123456789012345:0badcafe:a" },
  { label: "Deny", data: "bt:a:123456789012345:0badcafe:d", style: "danger" },
];

/** Runs `fn` with fetch stubbed, then checks every call against the declarations and the client. */
async function captured(fn: () => Promise<void>): Promise<FetchCall[]> {
  let all: FetchCall[] = [];
  await withFetch(OK, async (calls) => {
    await fn();
    all = [...calls];
  });
  for (const call of all) {
    assertArguments(call);
    const replay = await replayThroughWebClient(call);
    assertEquals(replay.warnings, [], `${call.url}: the official client warns`);
    assertEquals(replay.url, call.url);
    assertEquals(replay.auth, `Bearer ${TOKEN}`);
    assertSameArguments(replay.sent, call.body);
  }
  return all;
}

Deno.test("slackAdapter.send() posts chat.postMessage arguments Slack declares, with part metadata", async () => {
  const part: PartSend = { index: 0, count: 1, marker: "m-1-0" };
  const calls = await captured(async () => {
    assertEquals(await slackAdapter.send(thread, "hello", part, ENV), { ok: true });
  });
  assertEquals(calls.map(methodOf), ["chat.postMessage"]);
  assertEquals(calls[0].body.thread_ts, "1700000000.000100");
  assertEquals(calls[0].body.metadata.event_payload, { part: "m-1-0" });
});

Deno.test("slackAdapter.send() splits a long reply into chat.postMessage calls within 40,000 characters", async () => {
  const line = "Slack allows long messages, but not unbounded ones. ".repeat(40) + "\n\n";
  const parts = replyChannel([slackAdapter], ENV).split(thread, line.repeat(50));
  assert(parts.length >= 2, `${parts.length} parts`);
  const calls = await captured(async () => {
    for (const [index, text] of parts.entries()) {
      await slackAdapter.send(thread, text, { index, count: parts.length }, ENV);
    }
  });
  assertEquals(calls.length, parts.length);
  assertEquals(calls.map((c) => c.body.text), parts);
});

Deno.test("slackAdapter.send() attaches section and actions blocks @slack/types declares, within Block Kit limits", async () => {
  const part: PartSend = { index: 0, count: 1, choices, marker: "m-2-0" };
  const calls = await captured(async () => {
    await slackAdapter.send(thread, "Approval needed: shell ls", part, ENV);
  });
  const blocks = calls[0].body.blocks;
  assertEquals(blocks.map((b: { type: string }) => b.type), ["section", "actions"]);
  assertEquals(blocks[1].elements.map((e: Button) => e.value), choices.map((c) => c.data));
  assertEquals(blocks[1].elements.map((e: Button) => e.style), [
    "primary",
    undefined,
    undefined,
    "danger",
  ]);
  // With blocks, `text` is the notification fallback Slack asks for (the client warns without it).
  assertEquals(calls[0].body.text, "Approval needed: shell ls");
});

Deno.test("slackAdapter.typing() sets the assistant thread status with the declared arguments", async () => {
  const calls = await captured(async () => {
    assertEquals(await slackAdapter.typing!(thread, ENV), true);
  });
  assertEquals(calls.map(methodOf), ["assistant.threads.setStatus"]);
  assertEquals(calls[0].body.channel_id, "C0GENERAL");
  assertEquals(calls[0].body.thread_ts, "1700000000.000100");
});

Deno.test("slackAdapter preview, replace and endPreview send chat.postMessage, chat.update and chat.delete as declared", async () => {
  const calls = await captured(async () => {
    const first = await slackAdapter.preview!(thread, "the reply so far", 1, ENV);
    assertEquals(first, { handle: "1700000999.000100" });
    assertEquals(
      await slackAdapter.preview!(thread, "the reply, longer", 1, ENV, "1700000999.000100"),
      "shown",
    );
    const part: PartSend = { index: 0, count: 1, marker: "m-3-0", replaces: "1700000999.000100" };
    assertEquals(await slackAdapter.send(thread, "the reply", part, ENV), { ok: true });
    await slackAdapter.endPreview!(thread, "Stopped.", ENV, "1700000999.000100");
    await slackAdapter.endPreview!(thread, null, ENV, "1700000999.000100");
  });
  assertEquals(calls.map(methodOf), [
    "chat.postMessage",
    "chat.update",
    "chat.update",
    "chat.update",
    "chat.delete",
  ]);
});

Deno.test("slackAdapter.answerChoice() answers a click with chat.postEphemeral arguments Slack declares", async () => {
  const ingress = await parse(JSON.stringify(envelope(mention)));
  assert(ingress.kind === "message");
  const choice = {
    sessionKey: ingress.message.sessionKey,
    deliveryKey: "slack:click:1",
    data: choices[0].data,
    context: ingress.message.context,
    reply: ingress.message.reply,
    sender: ingress.message.sender,
  };
  const calls = await captured(async () => {
    await slackAdapter.answerChoice!(choice, { kind: "not_yours" }, ENV);
  });
  assertEquals(calls.map(methodOf), ["chat.postEphemeral"]);
  assertEquals(calls[0].body.user, "U0ALICE");
});

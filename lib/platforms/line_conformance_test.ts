// Conformance: the LINE adapter against @line/bot-sdk's validateSignature, its webhook event types, its messagingApi types and its own MessagingApiClient; Deno (tests only).
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { messagingApi, validateSignature, webhook } from "@line/bot-sdk";
import {
  PART_ROOM,
  type PlatformEnv,
  type RawRequest,
  RESEND_NOTE,
  splitMessage,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { lineAdapter, type LineTarget, signLinePayload } from "./line.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const SECRET = "8b4f1c0e2a3d4e5f6a7b8c9d0e1f2a3b";
const TOKEN = "line-channel-access-token";
const API = "http://line.test";
const ENV: PlatformEnv = {
  LINE_CHANNEL_SECRET: SECRET,
  LINE_CHANNEL_ACCESS_TOKEN: TOKEN,
  LINE_API_ROOT: API,
};
const USER = "U4af4980629a0b1c2d3e4f5a6b7c8d9e0";
const OTHER = "U0123456789abcdef0123456789abcdef";
const GROUP = "Ca56f94637cc4347f90a25382909b24b";
const ROOM = "Ra8dbf4673c4c812cd491258042226c99";
/** LINE's limits: text ≤ 5,000 characters, ≤ 5 messages a request, ≤ 13 quick replies, labels ≤ 20, postback data ≤ 300. */
const MAX_TEXT = 5000;
const MAX_MESSAGES = 5;
const MAX_QUICK_REPLIES = 13;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function raw(body: string, signature: string | null): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(signature === null ? {} : { "x-line-signature": signature }),
    }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/line",
    // The events' own time (`base.timestamp`): none is refused as a replay.
    nowSeconds: 1_700_000_000,
  };
}

/** A delivery as LINE sends it: the SDK's `CallbackRequest`, signed with baton's signer. */
async function delivery(callback: webhook.CallbackRequest): Promise<RawRequest> {
  const body = JSON.stringify(callback);
  return raw(body, await signLinePayload(SECRET, body));
}

const base = {
  timestamp: 1_700_000_000_000,
  mode: "active",
  deliveryContext: { isRedelivery: false },
} as const;

function text(
  id: string,
  source: webhook.Source,
  content: string,
  mention?: webhook.Mention,
): webhook.MessageEvent {
  const message: webhook.TextMessageContent = {
    type: "text",
    id: `5${id.padStart(17, "0")}`,
    text: content,
    quoteToken: `q-${id}`,
    ...(mention ? { mention } : {}),
  };
  return {
    ...base,
    type: "message",
    webhookEventId: `01H${id.padStart(23, "0")}`,
    replyToken: `r-${id}`,
    source,
    message,
  };
}

const user: webhook.UserSource = { type: "user", userId: USER };
const group: webhook.GroupSource = { type: "group", groupId: GROUP, userId: USER };
const room: webhook.RoomSource = { type: "room", roomId: ROOM, userId: USER };

Deno.test("signLinePayload() is accepted by @line/bot-sdk's validateSignature(), and lineAdapter.verify() agrees with it on every case", async () => {
  const body = JSON.stringify({ destination: "Uxxx", events: [text("1", user, "hi")] });
  const good = await signLinePayload(SECRET, body);
  assert(validateSignature(body, SECRET, good));
  const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
  const cases: { body: string; signature: string }[] = [
    { body, signature: good },
    { body, signature: await signLinePayload("another-channel-secret", body) },
    { body: body.replace('"hi"', '"hI"'), signature: good },
    { body: body + "\n", signature: good },
    { body, signature: flip(good) },
    { body, signature: good.slice(0, -4) },
    { body, signature: "" },
  ];
  for (const c of cases) {
    const sdk = validateSignature(c.body, SECRET, c.signature);
    const refusal = await lineAdapter.verify(raw(c.body, c.signature), ENV);
    assertStrictEquals(refusal === null, sdk, `${c.signature}: sdk ${sdk}, baton ${refusal}`);
  }
});

Deno.test("lineAdapter.parse() turns a webhook.MessageEvent from a user into a direct message", async () => {
  const event = text("1", user, "  What's the weather?  ");
  const ingress = lineAdapter.parse(await delivery({ destination: "Ubot", events: [event] }), ENV);
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message, {
    sessionKey: `line:user:${USER}`,
    deliveryKey: `line:${event.webhookEventId}`,
    text: "What's the weather?",
    context: {
      platform: "line",
      session_key: `line:user:${USER}`,
      chat_id: USER,
      chat_name: "",
      thread_id: "",
      user_id: USER,
      user_name: USER,
      message_id: event.message.id,
    },
    reply: { platform: "line", to: USER },
    sender: { platform: "line", user: USER, name: USER, direct: true },
  });
});

Deno.test("lineAdapter.parse() in a group or room answers only a mention of the bot (isSelf) or a command, without the mention", async () => {
  const self: webhook.UserMentionee = { type: "user", index: 0, length: 6, isSelf: true };
  const someone: webhook.UserMentionee = {
    type: "user",
    index: 0,
    length: 4,
    userId: OTHER,
    isSelf: false,
  };
  const everyone: webhook.AllMentionee = { type: "all", index: 0, length: 4 };
  const events = [
    text("2", group, "@Baton summarise this", { mentionees: [self] }),
    text("3", group, "@Bob summarise this", { mentionees: [someone] }),
    text("4", group, "@All lunch?", { mentionees: [everyone] }),
    text("5", group, "just chatting"),
    text("6", room, "/status"),
  ];
  const ingress = lineAdapter.parse(await delivery({ destination: "Ubot", events }), ENV);
  assert(ingress.kind === "messages", JSON.stringify(ingress));
  assertEquals(ingress.messages.map((m) => [m.sessionKey, m.text, m.sender.direct, m.reply.to]), [
    [`line:group:${GROUP}`, "summarise this", false, GROUP],
    [`line:room:${ROOM}`, "/status", false, ROOM],
  ]);
});

Deno.test("lineAdapter.parse() keeps one delivery key for a redelivered event (deliveryContext.isRedelivery)", async () => {
  const first = text("7", user, "hello");
  const again: webhook.MessageEvent = { ...first, deliveryContext: { isRedelivery: true } };
  const a = lineAdapter.parse(await delivery({ destination: "Ubot", events: [first] }), ENV);
  const b = lineAdapter.parse(await delivery({ destination: "Ubot", events: [again] }), ENV);
  assert(a.kind === "message" && b.kind === "message");
  assertStrictEquals(a.message.deliveryKey, b.message.deliveryKey);
});

Deno.test("lineAdapter.parse() reads a webhook.PostbackEvent of an approval quick reply as a choice, answerable only on first delivery", async () => {
  const [once] = approvalButtons(3, "call_1");
  const postback: webhook.PostbackEvent = {
    ...base,
    type: "postback",
    webhookEventId: "01HPOSTBACK0000000000000001",
    replyToken: "b60d432864f44d079f6d8efe86cf404b",
    source: group,
    postback: { data: once.data },
  };
  const ingress = lineAdapter.parse(
    await delivery({ destination: "Ubot", events: [postback] }),
    ENV,
  );
  assert(ingress.kind === "choice", JSON.stringify(ingress));
  assertStrictEquals(ingress.choice.data, once.data);
  assertStrictEquals(ingress.choice.handle, postback.replyToken);
  assertStrictEquals(ingress.choice.sessionKey, `line:group:${GROUP}`);

  const redelivered: webhook.PostbackEvent = {
    ...postback,
    deliveryContext: { isRedelivery: true },
  };
  const again = lineAdapter.parse(
    await delivery({ destination: "Ubot", events: [redelivered] }),
    ENV,
  );
  assert(again.kind === "choice");
  assertStrictEquals(again.choice.handle, undefined);

  // A rich menu's postback (not baton's data) starts nothing.
  const menu: webhook.PostbackEvent = { ...postback, postback: { data: "action=menu&item=1" } };
  const other = lineAdapter.parse(await delivery({ destination: "Ubot", events: [menu] }), ENV);
  assertStrictEquals(other.kind, "respond");
});

Deno.test("lineAdapter.parse() acknowledges follow, a group's image, standby and the console's empty verify delivery without a turn", async () => {
  const follow: webhook.FollowEvent = {
    ...base,
    type: "follow",
    webhookEventId: "01HFOLLOW000000000000000001",
    replyToken: "r-follow",
    source: user,
    follow: { isUnblocked: false },
  };
  const image: webhook.MessageEvent = {
    ...base,
    type: "message",
    webhookEventId: "01HIMAGE0000000000000000001",
    replyToken: "r-image",
    // A group's media cannot mention the bot: not for it (a 1:1 chat's image is a turn).
    source: group,
    message: {
      type: "image",
      id: "354718705033693861",
      quoteToken: "q-image",
      contentProvider: { type: "line" },
    },
  };
  const standby: webhook.MessageEvent = { ...text("8", user, "hi"), mode: "standby" };
  for (const events of [[follow], [image], [standby], []]) {
    const ingress = lineAdapter.parse(await delivery({ destination: "Ubot", events }), ENV);
    assertEquals(ingress, { kind: "respond", status: 200, body: { ok: true } });
  }
});

// ── out ─────────────────────────────────────────────────────────────────────────────────────────

const PUSH: KeyTable<messagingApi.PushMessageRequest> = {
  to: true,
  messages: true,
  notificationDisabled: true,
  customAggregationUnits: true,
};
const REPLY: KeyTable<messagingApi.ReplyMessageRequest> = {
  replyToken: true,
  messages: true,
  notificationDisabled: true,
};
const TEXT: KeyTable<messagingApi.TextMessage> = {
  type: true,
  text: true,
  emojis: true,
  quoteToken: true,
  quickReply: true,
  sender: true,
};
const QUICK_REPLY: KeyTable<messagingApi.QuickReply> = { items: true };
const QUICK_REPLY_ITEM: KeyTable<messagingApi.QuickReplyItem> = {
  imageUrl: true,
  action: true,
  type: true,
};
const POSTBACK: KeyTable<messagingApi.PostbackAction> = {
  type: true,
  label: true,
  data: true,
  displayText: true,
  text: true,
  inputOption: true,
  fillInText: true,
};
const LOADING: KeyTable<messagingApi.ShowLoadingAnimationRequest> = {
  chatId: true,
  loadingSeconds: true,
};

/** Checks one pushed or replied text message against the SDK's declarations and LINE's limits. */
function assertTextMessage(message: unknown): void {
  assertDeclaredKeys<messagingApi.TextMessage>("text message", message, TEXT, ["type", "text"]);
  const m = message as { type: string; text: string; quickReply?: { items: unknown[] } };
  assertStrictEquals(m.type, "text");
  assert(m.text.length > 0 && m.text.length <= MAX_TEXT, `text of ${m.text.length}`);
  if (!m.quickReply) return;
  assertDeclaredKeys<messagingApi.QuickReply>("quickReply", m.quickReply, QUICK_REPLY, ["items"]);
  assert(m.quickReply.items.length >= 1 && m.quickReply.items.length <= MAX_QUICK_REPLIES);
  for (const item of m.quickReply.items) {
    assertDeclaredKeys<messagingApi.QuickReplyItem>("quick reply item", item, QUICK_REPLY_ITEM, [
      "type",
      "action",
    ]);
    const { type, action } = item as { type: string; action: Record<string, unknown> };
    assertStrictEquals(type, "action");
    assertDeclaredKeys<messagingApi.PostbackAction>("postback action", action, POSTBACK, [
      "type",
      "label",
      "data",
    ]);
    assertStrictEquals(action.type, "postback");
    const label = String(action.label);
    assert(label.length >= 1 && label.length <= 20, `label ${label}`);
    assert(String(action.data).length <= 300, "postback data is at most 300 characters");
    assert(String(action.displayText ?? "").length <= 300, "displayText is at most 300 characters");
  }
}

/** What the SDK's own client sends for the same call: URL, the headers LINE reads, body. */
async function sdkSends(
  call: (client: messagingApi.MessagingApiClient) => Promise<unknown>,
): Promise<FetchCall> {
  let sent: FetchCall | undefined;
  await withFetch(() => Response.json({ sentMessages: [] }), async (calls) => {
    await call(new messagingApi.MessagingApiClient({ channelAccessToken: TOKEN, baseURL: API }));
    sent = calls[0];
  });
  assert(sent);
  return sent;
}

const TARGET: LineTarget = { platform: "line", to: USER };

Deno.test("lineAdapter.send() pushes what @line/bot-sdk's MessagingApiClient.pushMessage() sends for the same PushMessageRequest and retry key", async () => {
  const choices = approvalButtons(1, "call_9");
  let ours: FetchCall | undefined;
  await withFetch(() => Response.json({ sentMessages: [{ id: "1" }] }), async (calls) => {
    const result = await lineAdapter.send(TARGET, "May I run deploy?", {
      index: 0,
      count: 1,
      marker: "o12-abc",
      choices,
    }, ENV);
    assertEquals(result, { ok: true });
    ours = calls[0];
  });
  assert(ours);
  assertDeclaredKeys<messagingApi.PushMessageRequest>("push", ours.body, PUSH, ["to", "messages"]);
  assertStrictEquals(ours.body.to, USER);
  assert(ours.body.messages.length >= 1 && ours.body.messages.length <= MAX_MESSAGES);
  for (const message of ours.body.messages) assertTextMessage(message);
  const retryKey = ours.headers.get("x-line-retry-key") ?? "";
  assertMatch(retryKey, UUID);

  // The same request through the SDK: `request` is typed by the SDK, so the compiler checks it too.
  const request: messagingApi.PushMessageRequest = {
    to: ours.body.to,
    messages: ours.body.messages,
  };
  const sdk = await sdkSends((client) => client.pushMessage(request, retryKey));
  assertStrictEquals(ours.method, sdk.method);
  assertStrictEquals(ours.url, sdk.url);
  assertEquals(ours.body, sdk.body);
  for (const header of ["authorization", "content-type", "x-line-retry-key"]) {
    assertStrictEquals(ours.headers.get(header), sdk.headers.get(header), header);
  }
});

Deno.test("lineAdapter.send(): every part of a long reply, resent behind RESEND_NOTE, is one text message LINE accepts", async () => {
  const reply = "0123456789 ".repeat(Math.ceil(3 * MAX_TEXT / 11));
  const parts = splitMessage(reply, lineAdapter.maxMessageChars - PART_ROOM);
  assert(parts.length >= 3);
  await withFetch(() => Response.json({ sentMessages: [] }), async (calls) => {
    for (const [index, part] of parts.entries()) {
      await lineAdapter.send(TARGET, RESEND_NOTE + part, {
        index,
        count: parts.length,
        marker: `o${index}`,
      }, ENV);
    }
    const keys = new Set<string>();
    for (const call of calls) {
      assertDeclaredKeys<messagingApi.PushMessageRequest>("push", call.body, PUSH, [
        "to",
        "messages",
      ]);
      for (const message of call.body.messages) assertTextMessage(message);
      keys.add(call.headers.get("x-line-retry-key") ?? "");
    }
    assertStrictEquals(keys.size, parts.length, "each part has a retry key of its own");
  });
});

Deno.test("lineAdapter.answerChoice() replies with a ReplyMessageRequest as MessagingApiClient.replyMessage() sends it", async () => {
  const choice = {
    sessionKey: `line:group:${GROUP}`,
    deliveryKey: "line:01HX",
    data: approvalButtons(1, "c")[0].data,
    context: {
      platform: "line",
      chat_id: GROUP,
      chat_name: "",
      thread_id: "",
      user_id: OTHER,
      user_name: OTHER,
      session_key: `line:group:${GROUP}`,
      message_id: "01HX",
    },
    reply: { platform: "line" as const, to: GROUP },
    sender: { platform: "line", user: OTHER, name: OTHER, direct: false },
    handle: "b60d432864f44d079f6d8efe86cf404b",
  };
  let ours: FetchCall | undefined;
  await withFetch(() => Response.json({ sentMessages: [] }), async (calls) => {
    await lineAdapter.answerChoice!(choice, { kind: "not_yours" }, ENV);
    ours = calls[0];
  });
  assert(ours, "a click that did nothing is answered in the chat");
  assertDeclaredKeys<messagingApi.ReplyMessageRequest>("reply", ours.body, REPLY, [
    "replyToken",
    "messages",
  ]);
  for (const message of ours.body.messages) assertTextMessage(message);
  const request: messagingApi.ReplyMessageRequest = {
    replyToken: ours.body.replyToken,
    messages: ours.body.messages,
  };
  const sdk = await sdkSends((client) => client.replyMessage(request));
  assertStrictEquals(ours.url, sdk.url);
  assertEquals(ours.body, sdk.body);
});

Deno.test("lineAdapter.typing() starts the loading animation as MessagingApiClient.showLoadingAnimation() does, 5–60 s in fives", async () => {
  let ours: FetchCall | undefined;
  await withFetch(() => Response.json({}, { status: 202 }), async (calls) => {
    assert(await lineAdapter.typing!(TARGET, ENV));
    ours = calls[0];
    // Groups and rooms have no loading animation: nothing is sent for them.
    assertStrictEquals(await lineAdapter.typing!({ platform: "line", to: GROUP }, ENV), false);
    assertStrictEquals(calls.length, 1);
  });
  assert(ours);
  assertDeclaredKeys<messagingApi.ShowLoadingAnimationRequest>("loading", ours.body, LOADING, [
    "chatId",
  ]);
  const seconds = Number(ours.body.loadingSeconds);
  assert(seconds >= 5 && seconds <= 60 && seconds % 5 === 0, `loadingSeconds ${seconds}`);
  const request: messagingApi.ShowLoadingAnimationRequest = {
    chatId: ours.body.chatId,
    loadingSeconds: seconds,
  };
  const sdk = await sdkSends((client) => client.showLoadingAnimation(request));
  assertStrictEquals(ours.url, sdk.url);
  assertEquals(ours.body, sdk.body);
});

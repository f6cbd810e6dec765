// Conformance: the Telegram adapter against @grammyjs/types (Update in, Bot API method parameters out); Deno (tests only).
import { assert, assertEquals } from "@std/assert";
import type {
  ApiMethods,
  Chat,
  InlineKeyboardButton,
  InlineKeyboardMarkup,
  Message,
  Opts,
  ParseMode,
  ReplyParameters,
  Update,
  User,
} from "@grammyjs/types";
import {
  type Choice,
  type Ingress,
  type PartSend,
  type RawRequest,
  replyChannel,
} from "../chat/mod.ts";
import { telegramAdapter, type TelegramTarget } from "./telegram.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

// The secret as `setWebhook` takes it: 1–256 of A-Z a-z 0-9 _ - (the type ties it to the method).
const SECRET: NonNullable<Opts<never>["setWebhook"]["secret_token"]> = "tg-Conformance_0123456789";
const TOKEN = "123456789:AAE-conformance_token";
const ENV = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };
const HEADER = "X-Telegram-Bot-Api-Secret-Token";
const DATE = 1_700_000_000;

// ── the platform's shapes ────────────────────────────────────────────────────────────────────────

const alice: User = {
  id: 42,
  is_bot: false,
  first_name: "Alice",
  username: "alice",
  language_code: "en",
};
const privateChat: Chat.PrivateChat = {
  id: 42,
  type: "private",
  first_name: "Alice",
  username: "alice",
};
const group: Chat.GroupChat = { id: -4_000_000_001, type: "group", title: "Friends" };
const forum: Chat.SupergroupChat = {
  id: -1_001_234_567_890,
  type: "supergroup",
  title: "Builders",
  is_forum: true,
};
const channel: Chat.ChannelChat = { id: -1_009_876_543_210, type: "channel", title: "News" };
// Telegram's placeholder sender of an anonymous group admin's messages.
const groupAnonymousBot: User = {
  id: 1_087_968_824,
  is_bot: true,
  first_name: "Group",
  username: "GroupAnonymousBot",
};

const photo: Message.PhotoMessage["photo"] = [
  { file_id: "AgAD-small", file_unique_id: "AQAD1", width: 90, height: 67, file_size: 1_200 },
  { file_id: "AgAD-large", file_unique_id: "AQAD2", width: 1280, height: 960, file_size: 98_000 },
];

/** An update around a private message from Alice; `message` fills in the message's content. */
function privateUpdate(
  content: Pick<Message, "text" | "caption" | "photo" | "voice" | "document" | "entities">,
  updateId = 5001,
): Update {
  return {
    update_id: updateId,
    message: { message_id: 70, date: DATE, chat: privateChat, from: alice, ...content },
  };
}

// ── driving the adapter ──────────────────────────────────────────────────────────────────────────

function request(update: Update | string, secret: string | null = SECRET): RawRequest {
  const headers = new Headers({ "content-type": "application/json" });
  if (secret !== null) headers.set(HEADER, secret);
  return {
    headers,
    body: new TextEncoder().encode(typeof update === "string" ? update : JSON.stringify(update)),
    url: "https://baton.test/webhooks/telegram",
    nowSeconds: DATE,
  };
}

function parse(update: Update): Ingress<TelegramTarget> {
  return telegramAdapter.parse(request(update), ENV);
}

function message(update: Update) {
  const ingress = parse(update);
  if (ingress.kind !== "message") throw new Error(`not a turn: ${JSON.stringify(ingress)}`);
  return ingress.message;
}

function assertIgnored(update: Update): void {
  assertEquals(parse(update), { kind: "respond", status: 200, body: { ok: true } });
}

const OK = () => Response.json({ ok: true, result: true });

// ── tables tied to the official declarations ─────────────────────────────────────────────────────

type Methods = ApiMethods<never>;
type SendMessage = Opts<never>["sendMessage"];
type SendChatAction = Opts<never>["sendChatAction"];
type SendMessageDraft = Opts<never>["sendMessageDraft"];
type AnswerCallbackQuery = Opts<never>["answerCallbackQuery"];

/** The Bot API methods baton calls; a name Telegram does not declare fails to compile. */
const METHODS_USED = [
  "sendMessage",
  "sendChatAction",
  "sendMessageDraft",
  "answerCallbackQuery",
] as const satisfies readonly (keyof Methods)[];

const SEND_MESSAGE: KeyTable<SendMessage> = {
  business_connection_id: true,
  chat_id: true,
  message_thread_id: true,
  direct_messages_topic_id: true,
  ephemeral_message_parameters: true,
  text: true,
  parse_mode: true,
  entities: true,
  link_preview_options: true,
  disable_notification: true,
  protect_content: true,
  allow_paid_broadcast: true,
  suggested_post_parameters: true,
  message_effect_id: true,
  reply_parameters: true,
  reply_markup: true,
  reply_to_message_id: true,
};

const SEND_CHAT_ACTION: KeyTable<SendChatAction> = {
  business_connection_id: true,
  chat_id: true,
  message_thread_id: true,
  action: true,
};

/** Every chat action Telegram declares. */
const CHAT_ACTIONS: Record<SendChatAction["action"], true> = {
  typing: true,
  upload_photo: true,
  record_video: true,
  upload_video: true,
  record_voice: true,
  upload_voice: true,
  upload_document: true,
  choose_sticker: true,
  find_location: true,
  record_video_note: true,
  upload_video_note: true,
};

const SEND_MESSAGE_DRAFT: KeyTable<SendMessageDraft> = {
  chat_id: true,
  message_thread_id: true,
  draft_id: true,
  text: true,
  parse_mode: true,
  entities: true,
  can_stop: true,
  keep_on_stop: true,
};

const ANSWER_CALLBACK_QUERY: KeyTable<AnswerCallbackQuery> = {
  callback_query_id: true,
  text: true,
  show_alert: true,
  url: true,
  cache_time: true,
};

const REPLY_PARAMETERS: KeyTable<ReplyParameters> = {
  message_id: true,
  chat_id: true,
  ephemeral_message_id: true,
  checklist_task_id: true,
  poll_option_id: true,
  allow_sending_without_reply: true,
  quote: true,
  quote_parse_mode: true,
  quote_entities: true,
  quote_position: true,
};

const INLINE_KEYBOARD: KeyTable<InlineKeyboardMarkup> = {
  inline_keyboard: true,
  force_reply: true,
};

const CALLBACK_BUTTON: KeyTable<InlineKeyboardButton.CallbackButton> = {
  text: true,
  icon_custom_emoji_id: true,
  style: true,
  callback_data: true,
};

const PARSE_MODES: Record<ParseMode, true> = { Markdown: true, MarkdownV2: true, HTML: true };

/** Telegram's limit on a message's text (sendMessage: 1-4096 characters after entity parsing). */
const MAX_TEXT = 4096;
/** Telegram's limit on a button's callback data (1-64 bytes). */
const MAX_CALLBACK_BYTES = 64;

/** The Bot API method a captured call names, checked against the methods baton may call. */
function methodOf(call: FetchCall): (typeof METHODS_USED)[number] {
  const match = /^https:\/\/api\.telegram\.org\/bot([^/]+)\/([A-Za-z]+)$/.exec(call.url);
  assert(match, `not a Bot API URL: ${call.url}`);
  assertEquals(match[1], TOKEN);
  const method = METHODS_USED.find((m) => m === match[2]);
  assert(method, `a method baton does not declare: ${match[2]}`);
  assertEquals(call.method, "POST");
  assertEquals(call.headers.get("content-type"), "application/json");
  return method;
}

/** Checks a captured sendMessage body against the official parameter types and limits. */
function assertSendMessage(body: unknown): asserts body is SendMessage {
  assertDeclaredKeys<SendMessage>("sendMessage", body, SEND_MESSAGE, ["chat_id", "text"]);
  const b = body as Record<string, unknown>;
  assert(typeof b.chat_id === "number" || typeof b.chat_id === "string");
  assert(typeof b.text === "string" && b.text.length >= 1 && b.text.length <= MAX_TEXT);
  if ("parse_mode" in b) assert(typeof b.parse_mode === "string" && b.parse_mode in PARSE_MODES);
  if ("message_thread_id" in b) assert(Number.isInteger(b.message_thread_id));
  if ("reply_parameters" in b) {
    assertDeclaredKeys<ReplyParameters>("reply_parameters", b.reply_parameters, REPLY_PARAMETERS);
  }
  if ("reply_markup" in b) assertInlineKeyboard(b.reply_markup);
}

function assertInlineKeyboard(markup: unknown): void {
  assertDeclaredKeys<InlineKeyboardMarkup>("reply_markup", markup, INLINE_KEYBOARD, [
    "inline_keyboard",
  ]);
  const rows = (markup as { inline_keyboard: unknown }).inline_keyboard;
  assert(Array.isArray(rows) && rows.length > 0);
  for (const row of rows) {
    assert(Array.isArray(row) && row.length > 0, "an empty keyboard row");
    for (const button of row) {
      assertDeclaredKeys<InlineKeyboardButton.CallbackButton>("button", button, CALLBACK_BUTTON, [
        "text",
        "callback_data",
      ]);
      const { text, callback_data } = button as { text: unknown; callback_data: unknown };
      assert(typeof text === "string" && text.length > 0);
      assert(typeof callback_data === "string");
      const bytes = new TextEncoder().encode(callback_data).length;
      assert(bytes >= 1 && bytes <= MAX_CALLBACK_BYTES, `callback_data of ${bytes} bytes`);
    }
  }
}

// ── in: the secret-token header ──────────────────────────────────────────────────────────────────

Deno.test("telegramAdapter.verify() accepts exactly the secret_token given to setWebhook", async () => {
  const update = privateUpdate({ text: "hello" });
  assertEquals(await telegramAdapter.verify(request(update), ENV), null);
  // Header names are case-insensitive on the wire; Telegram's spelling and a proxy's lower case.
  const lower = request(update);
  lower.headers.delete(HEADER);
  lower.headers.set(HEADER.toLowerCase(), SECRET);
  assertEquals(await telegramAdapter.verify(lower, ENV), null);
});

Deno.test("telegramAdapter.verify() refuses a missing, empty or different secret token", async () => {
  const update = privateUpdate({ text: "hello" });
  for (const secret of [null, "", SECRET.slice(0, -1), SECRET + "x", SECRET.toLowerCase()]) {
    const refusal = await telegramAdapter.verify(request(update, secret), ENV);
    assert(typeof refusal === "string", `accepted ${JSON.stringify(secret)}`);
  }
  // An unset secret never matches an empty header, nor a header of anything.
  const unset = { TELEGRAM_BOT_TOKEN: TOKEN };
  assert(typeof await telegramAdapter.verify(request(update, "x"), unset) === "string");
});

// ── in: updates as the Bot API declares them ─────────────────────────────────────────────────────

Deno.test("telegramAdapter.parse() turns a private text Update into a turn replying to it", () => {
  const turn = message(privateUpdate({ text: "hello", entities: [] }));
  assertEquals(turn.sessionKey, "telegram:42");
  assertEquals(turn.deliveryKey, "tg:123456789:5001");
  assertEquals(turn.text, "hello");
  assertEquals(turn.reply, { platform: "telegram", chat_id: 42, message_id: 70 });
  assertEquals(turn.sender, { platform: "telegram", user: "42", name: "alice", direct: true });
});

Deno.test("telegramAdapter.parse() takes the caption of a photo and of a document", () => {
  const photoTurn = message(privateUpdate({ photo, caption: "what is this?" }));
  assertEquals(photoTurn.text, "what is this?");
  const document: Message.DocumentMessage["document"] = {
    file_id: "BQAC-doc",
    file_unique_id: "AgAD3",
    file_name: "report.pdf",
    mime_type: "application/pdf",
    file_size: 52_000,
  };
  assertEquals(message(privateUpdate({ document, caption: "summarise" })).text, "summarise");
});

Deno.test("telegramAdapter.parse() makes media without a caption a turn, announcing them unfetched (photo's largest size, voice, document)", () => {
  const voice: Message.VoiceMessage["voice"] = {
    file_id: "AwAC-voice",
    file_unique_id: "AgAD4",
    duration: 3,
    mime_type: "audio/ogg",
    file_size: 9_000,
  };
  const document: Message.DocumentMessage["document"] = {
    file_id: "BQAC-doc",
    file_unique_id: "AgAD5",
  };
  assertEquals(message(privateUpdate({ photo })).media, [
    {
      platform: "telegram",
      file: photo.at(-1)!.file_id,
      kind: "photo",
      size: photo.at(-1)!.file_size,
    },
  ]);
  assertEquals(message(privateUpdate({ voice })).media, [
    {
      platform: "telegram",
      file: "AwAC-voice",
      kind: "voice",
      type: "audio/ogg",
      size: 9_000,
      seconds: 3,
    },
  ]);
  const doc = message(privateUpdate({ document }));
  assertEquals([doc.text, doc.media], ["", [{
    platform: "telegram",
    file: "BQAC-doc",
    kind: "document",
  }]]);
});

Deno.test("telegramAdapter.parse() acknowledges an edited message without a second turn", () => {
  const edited: Update = {
    update_id: 5002,
    edited_message: {
      message_id: 70,
      date: DATE,
      edit_date: DATE + 30,
      chat: privateChat,
      from: alice,
      text: "hello (edited)",
    },
  };
  assertIgnored(edited);
});

Deno.test("telegramAdapter.parse() acknowledges a channel post and its edit without a turn", () => {
  const post: Update = {
    update_id: 5003,
    channel_post: {
      message_id: 9,
      date: DATE,
      chat: channel,
      sender_chat: channel,
      author_signature: "Editor",
      text: "news",
    },
  };
  assertIgnored(post);
  const editedPost: Update = {
    update_id: 5004,
    edited_channel_post: {
      message_id: 9,
      date: DATE,
      edit_date: DATE + 5,
      chat: channel,
      text: "news, corrected",
    },
  };
  assertIgnored(editedPost);
});

Deno.test("telegramAdapter.parse() keys a forum topic message by chat and topic, and replies into it", () => {
  const topic: Update = {
    update_id: 5005,
    message: {
      message_id: 300,
      message_thread_id: 299,
      is_topic_message: true,
      date: DATE,
      chat: forum,
      from: alice,
      text: "in the topic",
    },
  };
  const turn = message(topic);
  assertEquals(turn.sessionKey, `telegram:${forum.id}:299`);
  assertEquals(turn.reply, {
    platform: "telegram",
    chat_id: forum.id,
    message_id: 300,
    message_thread_id: 299,
  });
  assertEquals(turn.context.thread_id, "299");
  assertEquals(turn.sender.direct, false);
});

Deno.test("telegramAdapter.parse() keeps a reply thread without is_topic_message in the chat's session", () => {
  // Outside forum topics Telegram sets message_thread_id on replies too: not a topic of its own.
  const reply: Update = {
    update_id: 5006,
    message: {
      message_id: 301,
      message_thread_id: 120,
      date: DATE,
      chat: forum,
      from: alice,
      text: "a reply in the General topic",
    },
  };
  const turn = message(reply);
  assertEquals(turn.sessionKey, `telegram:${forum.id}`);
  assertEquals(turn.reply.message_thread_id, undefined);
});

Deno.test("telegramAdapter.parse() takes a group message that mentions the bot as a group turn", () => {
  const mention: Update = {
    update_id: 5007,
    message: {
      message_id: 12,
      date: DATE,
      chat: group,
      from: alice,
      text: "@baton_bot what time is it?",
      entities: [{ type: "mention", offset: 0, length: 10 }],
    },
  };
  const turn = message(mention);
  assertEquals(turn.sessionKey, `telegram:${group.id}`);
  assertEquals(turn.text, "@baton_bot what time is it?");
  assertEquals(turn.context.chat_name, "Friends");
  assertEquals(turn.sender, { platform: "telegram", user: "42", name: "alice", direct: false });
});

Deno.test("telegramAdapter.parse() answers an anonymous admin as the group and skips channel auto-forwards", () => {
  const anonymous: Update = {
    update_id: 5008,
    message: {
      message_id: 13,
      date: DATE,
      chat: forum,
      from: groupAnonymousBot,
      sender_chat: forum,
      text: "as the group",
    },
  };
  assertEquals(message(anonymous).sender, {
    platform: "telegram",
    user: String(forum.id),
    name: "Builders",
    direct: false,
  });
  const forwarded: Update = {
    update_id: 5009,
    message: {
      message_id: 14,
      date: DATE,
      chat: forum,
      from: { id: 777_000, is_bot: false, first_name: "Telegram" },
      sender_chat: channel,
      is_automatic_forward: true,
      text: "news",
    },
  };
  assertIgnored(forwarded);
});

Deno.test("telegramAdapter.parse() turns a callback_query on baton's button into a choice", () => {
  const question: Message = {
    message_id: 400,
    message_thread_id: 299,
    is_topic_message: true,
    date: DATE,
    chat: forum,
    from: { id: 123_456_789, is_bot: true, first_name: "Baton", username: "baton_bot" },
    text: "Approval needed: shell ls",
  };
  const click: Update = {
    update_id: 5010,
    callback_query: {
      id: "4382bfdwdsb323b2d9",
      from: alice,
      message: question,
      chat_instance: "-8245123000112",
      data: "bt:a:3:0badcafe:o",
    },
  };
  const ingress = parse(click);
  assert(ingress.kind === "choice", JSON.stringify(ingress));
  assertEquals(ingress.choice.sessionKey, `telegram:${forum.id}:299`);
  assertEquals(ingress.choice.data, "bt:a:3:0badcafe:o");
  assertEquals(ingress.choice.handle, "4382bfdwdsb323b2d9");
  assertEquals(ingress.choice.deliveryKey, "tg:cb:4382bfdwdsb323b2d9");
  assertEquals(ingress.choice.sender, {
    platform: "telegram",
    user: "42",
    name: "alice",
    direct: false,
  });
});

Deno.test("telegramAdapter.parse() takes a click on a question Telegram no longer shows (date 0)", () => {
  const click: Update = {
    update_id: 5011,
    callback_query: {
      id: "99",
      from: alice,
      message: { message_id: 401, date: 0, chat: privateChat },
      chat_instance: "1",
      data: "bt:a:3:0badcafe:d",
    },
  };
  const ingress = parse(click);
  assert(ingress.kind === "choice", JSON.stringify(ingress));
  assertEquals(ingress.choice.sessionKey, "telegram:42");
});

Deno.test("telegramAdapter.parse() ignores clicks that are not baton's: inline mode, other data, a game", () => {
  const inline: Update = {
    update_id: 5012,
    callback_query: {
      id: "100",
      from: alice,
      inline_message_id: "AAAA",
      chat_instance: "1",
      data: "bt:a:3:0badcafe:o",
    },
  };
  const other: Update = {
    update_id: 5013,
    callback_query: {
      id: "101",
      from: alice,
      message: { message_id: 402, date: DATE, chat: privateChat, text: "x" },
      chat_instance: "1",
      data: "page:2",
    },
  };
  const game: Update = {
    update_id: 5014,
    callback_query: {
      id: "102",
      from: alice,
      message: { message_id: 403, date: DATE, chat: privateChat, text: "x" },
      chat_instance: "1",
      game_short_name: "chess",
    },
  };
  for (const update of [inline, other, game]) assertIgnored(update);
});

// ── out: Bot API calls, checked against the method parameter types ───────────────────────────────

const choices: Choice[] = [
  { label: "Approve once", data: "bt:a:123456789012345:0badcafe:o", style: "primary" },
  { label: "This session", data: "bt:a:123456789012345:0badcafe:s" },
  { label: "Always", data: "bt:a:123456789012345:0badcafe:a" },
  { label: "Deny", data: "bt:a:123456789012345:0badcafe:d", style: "danger" },
];

const topicTarget: TelegramTarget = {
  platform: "telegram",
  chat_id: forum.id,
  message_id: 300,
  message_thread_id: 299,
};

Deno.test("telegramAdapter.send() posts a sendMessage body Telegram declares, into the topic", async () => {
  await withFetch(OK, async (calls) => {
    const part: PartSend = { index: 0, count: 1 };
    assertEquals(await telegramAdapter.send(topicTarget, "hello", part, ENV), { ok: true });
    assertEquals(calls.length, 1);
    assertEquals(methodOf(calls[0]), "sendMessage");
    const body = calls[0].body;
    assertSendMessage(body);
    assertEquals(body.chat_id, forum.id);
    assertEquals(body.message_thread_id, 299);
    assertEquals(body.reply_parameters?.message_id, 300);
  });
});

Deno.test("telegramAdapter.send() splits a long reply into sendMessage bodies within 4096 characters", async () => {
  const target: TelegramTarget = { platform: "telegram", chat_id: 42, message_id: 70 };
  const paragraph = "A sentence long enough to fill a message quickly. ".repeat(30) + "\n\n";
  const parts = replyChannel([telegramAdapter], ENV).split(target, paragraph.repeat(8));
  assert(parts.length >= 3, `${parts.length} parts`);
  await withFetch(OK, async (calls) => {
    for (const [index, text] of parts.entries()) {
      const sent = await telegramAdapter.send(target, text, { index, count: parts.length }, ENV);
      assertEquals(sent, { ok: true });
    }
    assertEquals(calls.length, parts.length);
    for (const [index, call] of calls.entries()) {
      assertEquals(methodOf(call), "sendMessage");
      assertSendMessage(call.body);
      // Only the first part answers the user's message; the rest follow it.
      assertEquals("reply_parameters" in call.body, index === 0);
    }
  });
});

Deno.test("telegramAdapter.send() attaches an inline keyboard Telegram declares, callback_data within 64 bytes", async () => {
  await withFetch(OK, async (calls) => {
    const part: PartSend = { index: 0, count: 1, choices };
    await telegramAdapter.send(topicTarget, "Approval needed: shell ls", part, ENV);
    const body = calls[0].body;
    assertSendMessage(body);
    const markup = body.reply_markup;
    assert(markup !== undefined && "inline_keyboard" in markup);
    const sent = markup.inline_keyboard.flat().map((b) => "callback_data" in b && b.callback_data);
    assertEquals(sent, choices.map((c) => c.data));
  });
});

Deno.test("telegramAdapter.typing() sends sendChatAction 'typing' with the declared parameters", async () => {
  await withFetch(OK, async (calls) => {
    assertEquals(await telegramAdapter.typing!(topicTarget, ENV), true);
    assertEquals(methodOf(calls[0]), "sendChatAction");
    const body = calls[0].body;
    assertDeclaredKeys<SendChatAction>("sendChatAction", body, SEND_CHAT_ACTION, [
      "chat_id",
      "action",
    ]);
    assert(body.action in CHAT_ACTIONS);
    assertEquals(body.action, "typing");
    assertEquals(body.message_thread_id, 299);
  });
});

Deno.test("telegramAdapter.preview() sends sendMessageDraft with a non-zero draft id, private chats only", async () => {
  const target: TelegramTarget = { platform: "telegram", chat_id: 42, message_id: 70 };
  await withFetch(OK, async (calls) => {
    assertEquals(await telegramAdapter.preview!(target, "the reply so far", 7, ENV), "shown");
    assertEquals(methodOf(calls[0]), "sendMessageDraft");
    const body = calls[0].body;
    assertDeclaredKeys<SendMessageDraft>("sendMessageDraft", body, SEND_MESSAGE_DRAFT, [
      "chat_id",
      "draft_id",
    ]);
    // sendMessageDraft: the target private chat's numeric id; draft_id non-zero; text 0-4096.
    assert(Number.isInteger(body.chat_id) && body.chat_id > 0);
    assert(Number.isInteger(body.draft_id) && body.draft_id !== 0);
    assert(typeof body.text === "string" && body.text.length <= MAX_TEXT);
    // A group has no drafts: nothing is sent.
    assertEquals(await telegramAdapter.preview!(topicTarget, "x", 7, ENV), "unsupported");
    assertEquals(calls.length, 1);
  });
});

Deno.test("telegramAdapter.answerChoice() answers the callback query with the declared parameters", async () => {
  const click: Update = {
    update_id: 5015,
    callback_query: {
      id: "4382bfdwdsb323b2d9",
      from: alice,
      message: { message_id: 402, date: DATE, chat: privateChat, text: "question" },
      chat_instance: "1",
      data: "bt:a:3:0badcafe:o",
    },
  };
  const ingress = parse(click);
  assert(ingress.kind === "choice");
  await withFetch(OK, async (calls) => {
    await telegramAdapter.answerChoice!(ingress.choice, {
      kind: "answered",
      tool: "t".repeat(300),
      choice: "once",
    }, ENV);
    assertEquals(methodOf(calls[0]), "answerCallbackQuery");
    const body = calls[0].body;
    assertDeclaredKeys<AnswerCallbackQuery>("answerCallbackQuery", body, ANSWER_CALLBACK_QUERY, [
      "callback_query_id",
    ]);
    assertEquals(body.callback_query_id, "4382bfdwdsb323b2d9");
    // The notification text is 0-200 characters.
    assert(typeof body.text === "string" && body.text.length <= 200);
  });
});

// Unit tests of the Telegram adapter's verify, parse and send over fixtures and a stubbed fetch; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { type Ingress, PayloadError, type RawRequest, type SendResult } from "../chat/mod.ts";
import { telegramAdapter } from "./telegram.ts";
import { withFetch } from "./_fetch_stub.ts";

const SECRET = "tg-secret_0123456789";
const TOKEN = "123456789:AAE-secret_token_part";
const ENV = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };

function _request(payload: unknown, secret: string | null = SECRET): RawRequest {
  const headers = new Headers({ "content-type": "application/json" });
  if (secret !== null) headers.set("X-Telegram-Bot-Api-Secret-Token", secret);
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  return {
    headers,
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/telegram",
    nowSeconds: 1_700_000_000,
  };
}

const _alice = { id: 42, is_bot: false, first_name: "Alice", username: "alice" };
const _private = { id: 42, type: "private", first_name: "Alice", username: "alice" };
const _group = { id: -1001234567890, type: "supergroup", title: "Builders", is_forum: true };

function _update(message: Record<string, unknown>, updateId = 1000): unknown {
  return {
    update_id: updateId,
    message: { message_id: 7, date: 1_700_000_000, chat: _private, from: _alice, ...message },
  };
}

function _parse(payload: unknown): Ingress {
  return telegramAdapter.parse(_request(payload), ENV);
}

function _ignoredBy(payload: unknown): void {
  assertEquals(_parse(payload), { kind: "respond", status: 200, body: { ok: true } });
}

Deno.test("telegramAdapter.verify() accepts the configured secret token", async () => {
  assertStrictEquals(await telegramAdapter.verify(_request({}), ENV), null);
});

Deno.test("telegramAdapter.verify() refuses a wrong secret token without echoing either", async () => {
  for (const wrong of ["tg-secret_0123456788", "zz9", SECRET + "x", SECRET.toUpperCase()]) {
    const refusal = await telegramAdapter.verify(_request({}, wrong), ENV);
    assert(typeof refusal === "string", `refused ${wrong}`);
    assert(!refusal.includes(SECRET) && !refusal.includes(wrong));
  }
});

Deno.test("telegramAdapter.verify() refuses a missing or empty header", async () => {
  assertEquals(
    await telegramAdapter.verify(_request({}, null), ENV),
    "missing X-Telegram-Bot-Api-Secret-Token header",
  );
  assert(await telegramAdapter.verify(_request({}, ""), ENV));
});

Deno.test("telegramAdapter.parse() turns a private text message into a turn", () => {
  assertEquals(_parse(_update({ text: "hello" })), {
    kind: "message",
    message: {
      sessionKey: "telegram:42",
      deliveryKey: "tg:123456789:1000",
      text: "hello",
      context: {
        platform: "telegram",
        session_key: "telegram:42",
        chat_id: "42",
        chat_name: "alice",
        thread_id: "",
        user_id: "42",
        user_name: "alice",
        message_id: "7",
      },
      reply: { platform: "telegram", chat_id: 42, message_id: 7 },
      sender: { platform: "telegram", user: "42", name: "alice", direct: true },
    },
  });
});

Deno.test("telegramAdapter.parse() keys a forum topic message by chat and thread", () => {
  const ingress = _parse(
    _update({
      chat: _group,
      message_thread_id: 55,
      is_topic_message: true,
      from: { id: 9, is_bot: false, first_name: "Bob" },
      text: "in a topic",
    }, 2001),
  );
  assert(ingress.kind === "message");
  assertEquals(ingress.message.sessionKey, "telegram:-1001234567890:55");
  assertEquals(ingress.message.deliveryKey, "tg:123456789:2001");
  assertEquals(ingress.message.context, {
    platform: "telegram",
    session_key: "telegram:-1001234567890:55",
    chat_id: "-1001234567890",
    chat_name: "Builders",
    thread_id: "55",
    user_id: "9",
    user_name: "Bob",
    message_id: "7",
  });
  assertEquals(ingress.message.reply, {
    platform: "telegram",
    chat_id: -1001234567890,
    message_id: 7,
    message_thread_id: 55,
  });
});

Deno.test("telegramAdapter.parse() keeps a reply thread outside a forum topic in the chat session", () => {
  const ingress = _parse(
    _update({ chat: { ..._group, is_forum: false }, message_thread_id: 3, text: "a reply" }),
  );
  assert(ingress.kind === "message");
  assertEquals(ingress.message.sessionKey, "telegram:-1001234567890");
  assertEquals(ingress.message.context.thread_id, "");
  assertEquals(ingress.message.reply.message_thread_id, undefined);
});

Deno.test("telegramAdapter.parse() takes the caption of a media message, text winning", () => {
  const captioned = _parse(_update({ photo: [{ file_id: "f" }], caption: "look" }));
  assert(captioned.kind === "message");
  assertEquals(captioned.message.text, "look");
  const both = _parse(_update({ text: "words", caption: "ignored" }));
  assert(both.kind === "message");
  assertEquals(both.message.text, "words");
});

Deno.test("telegramAdapter.parse() names the chat by title, username or first name", () => {
  const byFirstName = _parse(
    _update({ chat: { id: 5, type: "private", first_name: "Eve" }, text: "hi" }),
  );
  assert(byFirstName.kind === "message");
  assertEquals(byFirstName.message.context.chat_name, "Eve");
});

Deno.test("telegramAdapter.parse() answers an anonymous group admin as the group", () => {
  const ingress = _parse(
    _update({
      chat: _group,
      from: { id: 1087968824, is_bot: true, first_name: "Group", username: "GroupAnonymousBot" },
      sender_chat: _group,
      text: "from the admins",
    }),
  );
  assert(ingress.kind === "message");
  assertEquals(ingress.message.context.user_id, "-1001234567890");
  assertEquals(ingress.message.context.user_name, "Builders");
});

Deno.test("telegramAdapter.parse() ignores updates that are not user text messages", () => {
  const message = { message_id: 7, date: 1, chat: _private, from: _alice, text: "hi" };
  _ignoredBy({ update_id: 1, edited_message: message });
  _ignoredBy({ update_id: 1, channel_post: { ...message, chat: { id: -100, type: "channel" } } });
  _ignoredBy({ update_id: 1, my_chat_member: { chat: _group, from: _alice, date: 1 } });
  _ignoredBy({ update_id: 1, chat_member: { chat: _group, from: _alice, date: 1 } });
  _ignoredBy({ update_id: 1, callback_query: { id: "q", from: _alice, data: "x" } });
  _ignoredBy({ update_id: 1, poll: { id: "p" } });
  _ignoredBy(_update({ text: "loop", from: { id: 99, is_bot: true, first_name: "Bot" } }));
  _ignoredBy(_update({ new_chat_members: [_alice] }));
  _ignoredBy(_update({ left_chat_member: _alice }));
  _ignoredBy(_update({ pinned_message: message }));
  _ignoredBy(_update({ text: "" }));
  _ignoredBy(_update({ text: "channel post", is_automatic_forward: true }));
  _ignoredBy(_update({ text: "nobody", from: undefined }));
});

Deno.test("telegramAdapter.parse() ignores valid JSON that is not an update", () => {
  _ignoredBy([]);
  _ignoredBy({});
  _ignoredBy({ update_id: "1", message: { text: "hi" } });
  _ignoredBy({ update_id: 1, message: { text: "no chat" } });
  _ignoredBy("null");
});

Deno.test("telegramAdapter.parse() throws PayloadError for a body that is not JSON", () => {
  const error = assertThrows(() => _parse("{not json"));
  assert(error instanceof PayloadError);
});

const _ok = () => Response.json({ ok: true, result: { message_id: 1 } });
const _topicTarget = {
  platform: "telegram",
  chat_id: -100,
  message_id: 7,
  message_thread_id: 55,
} as const;

function _assertNoToken(result: SendResult): void {
  assert(!JSON.stringify(result).includes(TOKEN.split(":")[1]), "the token stays out");
}

Deno.test("telegramAdapter.send() posts sendMessage replying to the message on the first part only", async () => {
  await withFetch(_ok, async (seen) => {
    const env = { ...ENV, TELEGRAM_API_ROOT: "http://127.0.0.1:9/" };
    assertEquals(
      await telegramAdapter.send(_topicTarget, "one", { index: 0, count: 2 }, env),
      { ok: true },
    );
    assertEquals(
      await telegramAdapter.send(_topicTarget, "two", { index: 1, count: 2 }, env),
      { ok: true },
    );
    assertEquals(seen.map((s) => s.url), [
      `http://127.0.0.1:9/bot${TOKEN}/sendMessage`,
      `http://127.0.0.1:9/bot${TOKEN}/sendMessage`,
    ]);
    assertEquals(seen[0].body, {
      chat_id: -100,
      text: "one",
      message_thread_id: 55,
      reply_parameters: { message_id: 7, allow_sending_without_reply: true },
    });
    assertEquals(seen[1].body, { chat_id: -100, text: "two", message_thread_id: 55 });
  });
});

Deno.test("telegramAdapter.send() uses api.telegram.org without TELEGRAM_API_ROOT", async () => {
  await withFetch(_ok, async (seen) => {
    const target = { platform: "telegram", chat_id: 42, message_id: 7 } as const;
    await telegramAdapter.send(target, "hi", { index: 0, count: 1 }, ENV);
    assertEquals(seen[0].url, `https://api.telegram.org/bot${TOKEN}/sendMessage`);
    assertEquals(seen[0].body.message_thread_id, undefined);
  });
});

Deno.test("telegramAdapter.send() maps a 429 to retryable with retry_after in milliseconds", async () => {
  const answer = () =>
    Response.json({
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 3",
      parameters: { retry_after: 3 },
    }, { status: 429 });
  await withFetch(answer, async () => {
    const result = await telegramAdapter.send(_topicTarget, "x", { index: 0, count: 1 }, ENV);
    assertEquals(result, {
      ok: false,
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      message: "Telegram sendMessage answered 429: Too Many Requests: retry after 3",
    });
  });
});

Deno.test("telegramAdapter.send() falls back to a Retry-After header on a 429", async () => {
  const answer = () => new Response("", { status: 429, headers: { "retry-after": "2" } });
  await withFetch(answer, async () => {
    const result = await telegramAdapter.send(_topicTarget, "x", { index: 0, count: 1 }, ENV);
    assert(!result.ok);
    assertEquals([result.retryable, result.retryAfterMs], [true, 2000]);
  });
});

Deno.test("telegramAdapter.send() never retries other failures and keeps the token out of messages", async () => {
  const answers = [
    () =>
      Response.json(
        { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        { status: 400 },
      ),
    () => new Response("bad gateway", { status: 502 }),
    () => Response.json({ ok: false, description: `echo bot${TOKEN}` }, { status: 401 }),
    () => Response.json({ ok: false, description: "odd" }),
    (): Response => {
      throw new TypeError(`connect failed: https://api.telegram.org/bot${TOKEN}/sendMessage`);
    },
  ];
  for (const answer of answers) {
    await withFetch(answer, async () => {
      const result = await telegramAdapter.send(_topicTarget, "x", { index: 0, count: 1 }, ENV);
      assert(!result.ok);
      assertStrictEquals(result.retryable, false);
      _assertNoToken(result);
    });
  }
});

Deno.test("telegramAdapter.send() refuses a malformed token without calling out or echoing it", async () => {
  await withFetch(_ok, async (seen) => {
    const env = { ...ENV, TELEGRAM_BOT_TOKEN: "12:abc/../x?y" };
    const result = await telegramAdapter.send(_topicTarget, "x", { index: 0, count: 1 }, env);
    assert(!result.ok);
    assert(!result.message.includes("abc/../x"));
    assertEquals(seen.length, 0);
  });
});

Deno.test("telegramAdapter.parse() calls a private chat direct and a group not, with or without chat.type", () => {
  const direct = (message: Record<string, unknown>) => {
    const ingress = _parse(_update(message));
    if (ingress.kind !== "message") throw new Error("expected a message");
    return ingress.message.sender.direct;
  };
  assertEquals(direct({ text: "hi" }), true);
  assertEquals(direct({ text: "hi", chat: _group }), false);
  assertEquals(direct({ text: "hi", chat: { id: 42 } }), true);
  assertEquals(direct({ text: "hi", chat: { id: -100 } }), false);
});

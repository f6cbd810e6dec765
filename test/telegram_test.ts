// POST /webhooks/telegram end to end: workerd, a fake model and a fake Telegram Bot API on loopback; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { json, sessionState, settled, untilQueued } from "./_support/clients.ts";
import { echoSessionInfo, holdOn } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";

const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";
const SEND_PATH = `/bot${TOKEN}/sendMessage`;
const VARS = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };

const _alice = { id: 42, is_bot: false, first_name: "Alice", username: "alice" };
const _private = { id: 42, type: "private", first_name: "Alice", username: "alice" };
const _forum = { id: -1001234567890, type: "supergroup", title: "Builders", is_forum: true };

let _nextUpdate = 500_000;
let _nextMessage = 1;

/** A `message` update; override fields of the message, or pass `update_id`. */
function update(
  message: Record<string, unknown>,
  opts: { updateId?: number } = {},
): { update_id: number; message: Record<string, unknown> } {
  return {
    update_id: opts.updateId ?? _nextUpdate++,
    message: {
      message_id: _nextMessage++,
      date: Math.floor(Date.now() / 1000),
      chat: _private,
      from: _alice,
      ...message,
    },
  };
}

/** POSTs an update as Telegram does, with the secret-token header (null leaves it out). */
function sendUpdate(
  worker: TestWorker,
  payload: unknown,
  opts: { secret?: string | null; rawBody?: string } = {},
): Promise<Response> {
  const secret = opts.secret === undefined ? SECRET : opts.secret;
  return worker.fetch("/webhooks/telegram", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { "X-Telegram-Bot-Api-Secret-Token": secret }),
    },
    body: opts.rawBody ?? JSON.stringify(payload),
  });
}

Deno.test("POST /webhooks/telegram runs one turn and replies with sendMessage to the message", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    const delivery = update({ text: "hello bot" });
    await expectOk(await sendUpdate(worker, delivery));
    await telegram.waitForCalls(1);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["hello bot"]);
    const [call] = telegram.calls;
    assertEquals(call.method, "POST");
    assertEquals(call.path, SEND_PATH);
    assertEquals(call.body, {
      chat_id: 42,
      text: "hello bot",
      reply_parameters: {
        message_id: delivery.message.message_id,
        allow_sending_without_reply: true,
      },
    });
    await settled(worker, "telegram:42");
    assertEquals((await sessionState(worker, "telegram:42")).messages, [
      { role: "user", content: "hello bot" },
      { role: "assistant", content: "hello bot" },
    ]);
    assertStrictEquals(telegram.calls.length, 1);
  });
});

Deno.test("POST /webhooks/telegram keeps a forum topic in its own session and replies into the topic", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    const inTopic = update({
      chat: _forum,
      message_thread_id: 77,
      is_topic_message: true,
      text: "topic question",
    });
    await expectOk(await sendUpdate(worker, inTopic));
    await telegram.waitForCalls(1);
    assertEquals(telegram.calls[0].body, {
      chat_id: _forum.id,
      text: "topic question",
      message_thread_id: 77,
      reply_parameters: {
        message_id: inTopic.message.message_id,
        allow_sending_without_reply: true,
      },
    });
    await expectOk(await sendUpdate(worker, update({ chat: _forum, text: "general" })));
    await telegram.waitForCalls(2);
    assertEquals(telegram.calls[1].body.message_thread_id, undefined);
    assertEquals(fake.requests.length, 2);
    assertEquals(
      (await sessionState(worker, `telegram:${_forum.id}:77`)).messages[0].content,
      "topic question",
    );
    assertEquals(
      (await sessionState(worker, `telegram:${_forum.id}`)).messages[0].content,
      "general",
    );
  });
});

Deno.test("POST /webhooks/telegram refuses a wrong or missing secret token with 401 and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    for (const secret of ["wrong-secret", SECRET + "x", "", null]) {
      const res = await sendUpdate(worker, update({ text: "intruder" }), { secret });
      const body = await json(res);
      assertStrictEquals(res.status, 401, JSON.stringify(body));
      assertEquals(body.error.type, "invalid_signature");
      assert(!JSON.stringify(body).includes(SECRET));
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(telegram.calls.length, 0);
  });
});

Deno.test("POST /webhooks/telegram answers 400 to a body that is not JSON after a valid secret", async () => {
  await withPlatform(VARS, async (worker, fake) => {
    const res = await sendUpdate(worker, null, { rawBody: "{not json" });
    assertStrictEquals(res.status, 400);
    assertStrictEquals(fake.requests.length, 0);
  });
});

Deno.test("POST /webhooks/telegram refuses with 403 and starts nothing while a secret is missing", async () => {
  const partial: Record<string, string>[] = [
    { TELEGRAM_BOT_TOKEN: TOKEN },
    { TELEGRAM_WEBHOOK_SECRET: SECRET },
  ];
  for (const vars of partial) {
    await withPlatform(vars, async (worker, fake, telegram) => {
      const res = await sendUpdate(worker, update({ text: "anyone?" }));
      const body = await json(res);
      assertStrictEquals(res.status, 403, JSON.stringify(body));
      assertEquals(body.error.type, "not_configured");
      assert(!JSON.stringify(body).includes(SECRET) && !JSON.stringify(body).includes(TOKEN));
      await pause(200);
      assertStrictEquals(fake.requests.length, 0);
      assertStrictEquals(telegram.calls.length, 0);
    });
  }
});

Deno.test("POST /webhooks/telegram runs a replayed update_id once and replies once", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    const delivery = update({ text: "only once" });
    await expectOk(await sendUpdate(worker, delivery));
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:42");
    await expectOk(await sendUpdate(worker, delivery));
    await pause(300);
    await settled(worker, "telegram:42");
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(telegram.calls.length, 1);
    assertStrictEquals((await sessionState(worker, "telegram:42")).messages.length, 2);
  });
});

Deno.test("POST /webhooks/telegram acknowledges while the model call is still running", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    fake.script(() => ({ kind: "hold" }));
    const res = await sendUpdate(worker, update({ text: "think hard" }));
    await fake.waitForRequests(1);
    await expectOk(res);
    assertStrictEquals(fake.inFlight, 1, "the model call is still running");
    assertStrictEquals(telegram.calls.length, 0);
    fake.release();
    await telegram.waitForCalls(1);
    assertEquals(telegram.calls[0].body.text, "think hard");
  });
});

Deno.test("POST /webhooks/telegram runs one turn for the same update sent five times during a slow turn", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    fake.script(() => ({ kind: "hold" }));
    const delivery = update({ text: "slow one" });
    await expectOk(await sendUpdate(worker, delivery));
    await fake.waitForRequests(1);
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => sendUpdate(worker, delivery)),
    );
    for (const res of retries) await expectOk(res);
    fake.release();
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:42");
    await pause(200);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(telegram.calls.length, 1);
    assertEquals((await sessionState(worker, "telegram:42")).messages, [
      { role: "user", content: "slow one" },
      { role: "assistant", content: "slow one" },
    ]);
  });
});

Deno.test("POST /webhooks/telegram runs two messages of one chat as two turns in order", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    fake.script(holdOn("first"));
    await expectOk(await sendUpdate(worker, update({ text: "first" })));
    await fake.waitForRequests(1);
    await expectOk(await sendUpdate(worker, update({ text: "second" })));
    await untilQueued(worker, "telegram:42", 1);
    assertStrictEquals(fake.requests.length, 1, "the second waits for the first");
    await telegram.waitForCalls(1); // the queued notice to the second message's sender
    fake.release();
    await telegram.waitForCalls(3);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second"]);
    assertEquals(telegram.calls.map((c) => c.body.text), [
      "Queued — I'll answer after the current reply.",
      "first",
      "second",
    ]);
  });
});

Deno.test("POST /webhooks/telegram sends a 9,000-character reply as ordered parts of at most 4,096", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    const words = Array.from({ length: 1500 }, (_, i) => `w${i}`);
    let long = "";
    for (let i = 0; long.length < 9000; i++) {
      long += words[i % words.length] + (i % 40 === 39 ? "\n\n" : i % 10 === 9 ? "\n" : " ");
    }
    long = long.slice(0, 9000);
    assertStrictEquals(long.length, 9000);
    fake.script(() => ({ kind: "text", text: long }));
    const delivery = update({ text: "write a lot" });
    await expectOk(await sendUpdate(worker, delivery));
    await settled(worker, "telegram:42");
    const parts = telegram.calls.map((c) => c.body);
    assert(parts.length >= 3, `${parts.length} parts`);
    for (const part of parts) {
      assert(part.text.length > 0 && part.text.length <= 4096, `${part.text.length} chars`);
      assertStrictEquals(part.chat_id, 42);
    }
    assertStrictEquals(parts.map((p) => p.text).join(""), long);
    assertEquals(parts[0].reply_parameters, {
      message_id: delivery.message.message_id,
      allow_sending_without_reply: true,
    });
    assert(parts.slice(1).every((p) => p.reply_parameters === undefined));
    assertStrictEquals(fake.requests.length, 1);
  });
});

Deno.test("POST /webhooks/telegram waits out a 429 retry_after, then delivers exactly once", async () => {
  await withPlatform(VARS, async (worker, _fake, telegram) => {
    const at: number[] = [];
    telegram.respond((_, index) => {
      at.push(Date.now());
      return index === 0
        ? {
          status: 429,
          body: {
            ok: false,
            error_code: 429,
            description: "Too Many Requests: retry after 1",
            parameters: { retry_after: 1 },
          },
        }
        : { status: 200, body: { ok: true, result: { message_id: 900 + index } } };
    });
    await expectOk(await sendUpdate(worker, update({ text: "rate limited" })));
    await telegram.waitForCalls(2);
    await settled(worker, "telegram:42");
    await pause(300);
    assertStrictEquals(telegram.calls.length, 2);
    assert(at[1] - at[0] >= 950, `waited ${at[1] - at[0]} ms`);
    assertEquals(telegram.calls[0].body, telegram.calls[1].body);
    assertEquals(telegram.calls[1].body.text, "rate limited");
  });
});

Deno.test("POST /webhooks/telegram never resends a reply Telegram refused, and the chat stays usable", async () => {
  await withPlatform(VARS, async (worker, _fake, telegram) => {
    telegram.respond((_, index) =>
      index === 0
        ? {
          status: 400,
          body: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        }
        : { status: 200, body: { ok: true, result: { message_id: 1 } } }
    );
    await expectOk(await sendUpdate(worker, update({ text: "refused" })));
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:42");
    await pause(300);
    assertStrictEquals(telegram.calls.length, 1);
    await expectOk(await sendUpdate(worker, update({ text: "next" })));
    await telegram.waitForCalls(2);
    assertEquals(telegram.calls[1].body.text, "next");
  });
});

Deno.test("POST /webhooks/telegram acknowledges edits, bots, joins, media and other updates with no turn", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    const message = update({ text: "edited" }).message;
    const ignored: unknown[] = [
      { update_id: _nextUpdate++, edited_message: message },
      {
        update_id: _nextUpdate++,
        channel_post: { ...message, chat: { id: -100, type: "channel" } },
      },
      {
        update_id: _nextUpdate++,
        my_chat_member: { chat: _forum, from: _alice, date: 1, old_chat_member: {} },
      },
      { update_id: _nextUpdate++, chat_member: { chat: _forum, from: _alice, date: 1 } },
      { update_id: _nextUpdate++, callback_query: { id: "cb1", from: _alice, data: "x" } },
      { update_id: _nextUpdate++, message_reaction: { chat: _private, message_id: 1 } },
      update({ text: "I am a bot", from: { id: 999, is_bot: true, first_name: "Other" } }),
      update({ chat: _forum, new_chat_members: [_alice] }),
      update({ chat: _forum, left_chat_member: _alice }),
      update({ photo: [{ file_id: "p", width: 1, height: 1 }] }),
      update({ sticker: { file_id: "s" } }),
      { some: "json" },
    ];
    for (const payload of ignored) await expectOk(await sendUpdate(worker, payload));
    // A real message after them: the only turn that runs.
    await expectOk(await sendUpdate(worker, update({ text: "real" })));
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:42");
    await pause(200);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["real"]);
    assertStrictEquals(telegram.calls.length, 1);
  });
});

Deno.test("POST /webhooks/telegram binds the message's context for session_info", async () => {
  await withPlatform(VARS, async (worker, fake, telegram) => {
    fake.script(echoSessionInfo());
    const delivery = update({
      chat: _forum,
      from: { id: 314, is_bot: false, first_name: "Bob", username: "bobby" },
      message_thread_id: 9,
      is_topic_message: true,
      text: "who am I?",
    });
    await expectOk(await sendUpdate(worker, delivery));
    await telegram.waitForCalls(1);
    // session_info reports no chat_name (lib/tools.ts); the unit tests cover that field.
    assertEquals(JSON.parse(telegram.calls[0].body.text), {
      platform: "telegram",
      chat_id: String(_forum.id),
      thread_id: "9",
      user_id: "314",
      user_name: "bobby",
      session_key: `telegram:${_forum.id}:9`,
      message_id: String(delivery.message.message_id),
      async_delivery: false,
    });
  });
});

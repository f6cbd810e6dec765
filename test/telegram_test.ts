// POST /webhooks/telegram end to end: workerd, a fake model and a fake Telegram Bot API on loopback; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sessionState, settled } from "./_support/clients.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";

const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";
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

Deno.test("POST /webhooks/telegram answers 400 to a body that is not JSON after a valid secret", async () => {
  await withPlatform(VARS, async (worker, fake) => {
    const res = await sendUpdate(worker, null, { rawBody: "{not json" });
    assertStrictEquals(res.status, 400);
    assertStrictEquals(fake.requests.length, 0);
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

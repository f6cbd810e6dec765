// POST /webhooks/telegram end to end: one workerd for the file, a fake model and a fake Telegram Bot API on loopback; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sessionState, settled } from "./_support/clients.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";
const VARS = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };

// One Worker for the file: each test talks from users and chats of its own.
const baton = sharedBaton({ vars: VARS });

/** A user and their private chat with the bot (in Telegram the chat's id is the user's). */
function person(id: number, username: string) {
  return {
    from: { id, is_bot: false, first_name: username, username },
    chat: { id, type: "private", first_name: username, username },
  };
}

/** A forum supergroup (topics on). */
function forum(id: number) {
  return { id, type: "supergroup", title: "Builders", is_forum: true };
}

let _nextUpdate = 500_000;
let _nextMessage = 1;

/** A `message` update; give its `chat` and `from` (see {@link person}), or pass `update_id`. */
function update(
  message: Record<string, unknown>,
  opts: { updateId?: number } = {},
): { update_id: number; message: Record<string, unknown> } {
  return {
    update_id: opts.updateId ?? _nextUpdate++,
    message: {
      message_id: _nextMessage++,
      date: Math.floor(Date.now() / 1000),
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

baton.test(
  "POST /webhooks/telegram keeps a forum topic in its own session and replies into the topic",
  async (worker, fake, telegram) => {
    const alice = person(4201, "alice");
    const builders = forum(-1001000000001);
    const inTopic = update({
      chat: builders,
      from: alice.from,
      message_thread_id: 77,
      is_topic_message: true,
      text: "topic question",
    });
    await expectOk(await sendUpdate(worker, inTopic));
    await telegram.waitForCalls(1);
    assertEquals(telegram.calls[0].body, {
      chat_id: builders.id,
      text: "topic question",
      message_thread_id: 77,
      reply_parameters: {
        message_id: inTopic.message.message_id,
        allow_sending_without_reply: true,
      },
    });
    await expectOk(
      await sendUpdate(worker, update({ chat: builders, from: alice.from, text: "general" })),
    );
    await telegram.waitForCalls(2);
    assertEquals(telegram.calls[1].body.message_thread_id, undefined);
    assertEquals(fake.requests.length, 2);
    assertEquals(
      (await sessionState(worker, `telegram:${builders.id}:77`)).messages[0].content,
      "topic question",
    );
    assertEquals(
      (await sessionState(worker, `telegram:${builders.id}`)).messages[0].content,
      "general",
    );
  },
);

baton.test(
  "POST /webhooks/telegram answers 400 to a body that is not JSON after a valid secret",
  async (worker, fake) => {
    const res = await sendUpdate(worker, null, { rawBody: "{not json" });
    assertStrictEquals(res.status, 400);
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /webhooks/telegram never resends a reply Telegram refused, and the chat stays usable",
  async (worker, _fake, telegram) => {
    const alice = person(4203, "alice");
    telegram.respond((_, index) =>
      index === 0
        ? {
          status: 400,
          body: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        }
        : { status: 200, body: { ok: true, result: { message_id: 1 } } }
    );
    await expectOk(await sendUpdate(worker, update({ ...alice, text: "refused" })));
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${alice.chat.id}`);
    await pause(300);
    assertStrictEquals(telegram.calls.length, 1);
    await expectOk(await sendUpdate(worker, update({ ...alice, text: "next" })));
    await telegram.waitForCalls(2);
    assertEquals(telegram.calls[1].body.text, "next");
  },
);

baton.test(
  "POST /webhooks/telegram acknowledges edits, bots, joins, media and other updates with no turn",
  async (worker, fake, telegram) => {
    const alice = person(4204, "alice");
    const builders = forum(-1001000000004);
    const message = update({ ...alice, text: "edited" }).message;
    const ignored: unknown[] = [
      { update_id: _nextUpdate++, edited_message: message },
      {
        update_id: _nextUpdate++,
        channel_post: { ...message, chat: { id: -1000000000004, type: "channel" } },
      },
      {
        update_id: _nextUpdate++,
        my_chat_member: { chat: builders, from: alice.from, date: 1, old_chat_member: {} },
      },
      { update_id: _nextUpdate++, chat_member: { chat: builders, from: alice.from, date: 1 } },
      { update_id: _nextUpdate++, callback_query: { id: "cb1", from: alice.from, data: "x" } },
      { update_id: _nextUpdate++, message_reaction: { chat: alice.chat, message_id: 1 } },
      update({
        chat: alice.chat,
        text: "I am a bot",
        from: { id: 999, is_bot: true, first_name: "Other" },
      }),
      update({ chat: builders, from: alice.from, new_chat_members: [alice.from] }),
      update({ chat: builders, from: alice.from, left_chat_member: alice.from }),
      update({ ...alice, photo: [{ file_id: "p", width: 1, height: 1 }] }),
      update({ ...alice, sticker: { file_id: "s" } }),
      { some: "json" },
    ];
    for (const payload of ignored) await expectOk(await sendUpdate(worker, payload));
    // A real message after them: the only turn that runs.
    await expectOk(await sendUpdate(worker, update({ ...alice, text: "real" })));
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${alice.chat.id}`);
    await pause(200);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["real"]);
    assertStrictEquals(telegram.calls.length, 1);
  },
);

baton.test(
  "POST /webhooks/telegram binds the message's context for session_info",
  async (worker, fake, telegram) => {
    const builders = forum(-1001000000005);
    fake.script(echoSessionInfo());
    const delivery = update({
      chat: builders,
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
      chat_id: String(builders.id),
      thread_id: "9",
      user_id: "314",
      user_name: "bobby",
      session_key: `telegram:${builders.id}:9`,
      message_id: String(delivery.message.message_id),
      async_delivery: false,
    });
  },
);

baton.done();

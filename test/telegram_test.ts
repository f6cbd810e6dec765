// POST /webhooks/telegram end to end: one workerd for the file, a fake model and a fake Telegram Bot API on loopback; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sessionState, settled } from "./_support/clients.ts";
import type { Post } from "./_support/drivers/mod.ts";
import { telegramDriver as driver } from "./_support/drivers/telegram.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file: each test talks from users and chats of its own.
const baton = sharedBaton({ vars: driver.vars() });

/** A user and their private chat with the bot (in Telegram the chat's id is the user's). */
function person(id: number, username: string) {
  return {
    from: { id, is_bot: false, first_name: username, username },
    chat: { id, type: "private", first_name: username, username },
  };
}

/** A forum supergroup (topics on): Telegram's group with topics, set on top of the driver's group. */
function forum(id: number) {
  return { id, type: "supergroup", title: "Builders", is_forum: true };
}

let _nextMessage = 1;

/** A `message` update: telegramDriver's shape of `post`, `extra` set on its message. */
function update(
  post: Omit<Post, "id">,
  extra: Record<string, unknown> = {},
): { update_id: number; message: Record<string, unknown> & { message_id: number } } {
  const shaped = driver.shape({ ...post, id: String(_nextMessage++) }) as {
    update_id: number;
    message: Record<string, unknown> & { message_id: number };
  };
  return { ...shaped, message: { ...shaped.message, ...extra } };
}

/** `person`'s message `text` in their private chat (`extra` set on top). */
function said(who: ReturnType<typeof person>, text: string, extra: Record<string, unknown> = {}) {
  return update({ chat: String(who.chat.id), text }, { from: who.from, chat: who.chat, ...extra });
}

/** `who`'s message `text` in the forum `chat`, `extra` on top (a topic, a join…). */
function inForum(
  chat: ReturnType<typeof forum>,
  who: ReturnType<typeof person>["from"],
  text: string,
  extra: Record<string, unknown> = {},
) {
  return update({ chat: String(chat.id), text, group: true }, { chat, from: who, ...extra });
}

/** `u` with its message's `field` left out (a service message or a medium carries no text). */
function without(u: ReturnType<typeof update>, field: string): ReturnType<typeof update> {
  const { [field]: _, ...message } = u.message;
  return { ...u, message: message as typeof u.message };
}

/** An update of another kind than `message`, under the driver's next update_id. */
function other(fields: Record<string, unknown>): Record<string, unknown> {
  return { update_id: update({ chat: "0", text: "" }).update_id, ...fields };
}

/** POSTs an update as Telegram does: signed by telegramDriver (`rawBody` sent in its place). */
async function sendUpdate(
  worker: TestWorker,
  payload: unknown,
  opts: { rawBody?: string } = {},
): Promise<Response> {
  const body = opts.rawBody ?? JSON.stringify(payload);
  const headers = await driver.sign(body, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body });
}

baton.test(
  "POST /webhooks/telegram keeps a forum topic in its own session and replies into the topic",
  async (worker, fake, telegram) => {
    const alice = person(4201, "alice");
    const builders = forum(-1001000000001);
    const inTopic = inForum(builders, alice.from, "topic question", {
      message_thread_id: 77,
      is_topic_message: true,
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
      await sendUpdate(worker, inForum(builders, alice.from, "general")),
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
    await expectOk(await sendUpdate(worker, said(alice, "refused")));
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${alice.chat.id}`);
    await pause(300);
    assertStrictEquals(telegram.calls.length, 1);
    await expectOk(await sendUpdate(worker, said(alice, "next")));
    await telegram.waitForCalls(2);
    assertEquals(telegram.calls[1].body.text, "next");
  },
);

baton.test(
  "POST /webhooks/telegram acknowledges edits, bots, joins, media and other updates with no turn",
  async (worker, fake, telegram) => {
    const alice = person(4204, "alice");
    const builders = forum(-1001000000004);
    const message = said(alice, "edited").message;
    const ignored: unknown[] = [
      other({ edited_message: message }),
      other({ channel_post: { ...message, chat: { id: -1000000000004, type: "channel" } } }),
      other({
        my_chat_member: { chat: builders, from: alice.from, date: 1, old_chat_member: {} },
      }),
      other({ chat_member: { chat: builders, from: alice.from, date: 1 } }),
      other({ callback_query: { id: "cb1", from: alice.from, data: "x" } }),
      other({ message_reaction: { chat: alice.chat, message_id: 1 } }),
      said(alice, "I am a bot", { from: { id: 999, is_bot: true, first_name: "Other" } }),
      without(inForum(builders, alice.from, "", { new_chat_members: [alice.from] }), "text"),
      without(inForum(builders, alice.from, "", { left_chat_member: alice.from }), "text"),
      { some: "json" },
    ];
    for (const payload of ignored) await expectOk(await sendUpdate(worker, payload));
    // A real message after them: the only turn that runs.
    await expectOk(await sendUpdate(worker, said(alice, "real")));
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
    const bob = { id: 314, is_bot: false, first_name: "Bob", username: "bobby" };
    const delivery = inForum(builders, bob, "who am I?", {
      message_thread_id: 9,
      is_topic_message: true,
    });
    await expectOk(await sendUpdate(worker, delivery));
    await telegram.waitForCalls(1);
    // session_info reports no chat_name (lib/agent/tools.ts); the unit tests cover that field.
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

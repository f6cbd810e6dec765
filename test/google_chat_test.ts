// POST /webhooks/google-chat end to end: workerd, a fake model and a fake Google (Chat's key set, the OAuth token endpoint, the Chat API) on loopback; approval cards; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { decodeJwt } from "jose";
import { GOOGLE_CHAT_ISSUER } from "../lib/platforms/google_chat.ts";
import { signTestJwt, testServiceAccount, testSigningKey } from "../lib/platforms/_jwt_fixtures.ts";
import { json, sessionState, settled, until, untilQueued } from "./_support/clients.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { askThenEcho, holdOn, toolRuns } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";

const PROJECT = "123456789012";
const ACCOUNT = await testServiceAccount();
const VARS = { GOOGLE_CHAT_AUDIENCE: PROJECT, GOOGLE_CHAT_SERVICE_ACCOUNT: ACCOUNT.json };
const SPACE = "spaces/AAAAdm0001";
const SESSION = `google-chat:${SPACE}`;
const MESSAGES_PATH = `/chat/v1/${SPACE}/messages`;
const KEY = await testSigningKey("chat-key-1");
const STRANGER_KEY = await testSigningKey("chat-key-1");

let _next = 1;

/** A MESSAGE event in the DM with Grace, as an HTTP Chat app receives it. */
function chatMessage(text: string, id = `m${_next++}.m`) {
  return {
    type: "MESSAGE",
    eventTime: new Date().toISOString(),
    space: { name: SPACE, type: "DM", spaceType: "DIRECT_MESSAGE", singleUserBotDm: true },
    message: {
      name: `${SPACE}/messages/${id}`,
      sender: { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" },
      text,
      argumentText: text,
      thread: { name: `${SPACE}/threads/t1` },
    },
    user: { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" },
  };
}

/** POSTs an event with Chat's bearer JWT (or `token` as given; null: no header). */
async function post(
  worker: TestWorker,
  platform: FakePlatform,
  body: unknown,
  opts: { token?: string | null } = {},
): Promise<Response> {
  platform.jwks.keys = [KEY.jwk];
  const token = opts.token === undefined
    ? await signTestJwt(KEY, { issuer: GOOGLE_CHAT_ISSUER, audience: PROJECT })
    : opts.token;
  return worker.fetch("/webhooks/google-chat", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
}

Deno.test("POST /webhooks/google-chat runs one turn and replies in the thread as the service account", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    await expectOk(await post(worker, chat, chatMessage("hello bot")), {});
    await chat.waitForCalls(1);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["hello bot"]);
    const [call] = chat.calls;
    const url = new URL(call.path, "http://x");
    assertStrictEquals(url.pathname, MESSAGES_PATH);
    assertMatch(url.searchParams.get("messageId") ?? "", /^client-[a-z0-9-]+$/);
    assertStrictEquals(url.searchParams.get("requestId"), url.searchParams.get("messageId"));
    assertStrictEquals(
      url.searchParams.get("messageReplyOption"),
      "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
    );
    assertMatch(call.headers.get("authorization") ?? "", /^Bearer fake-access-token-\d+$/);
    assertEquals(call.body, { text: "hello bot", thread: { name: `${SPACE}/threads/t1` } });
    const token = chat.auth.find((c) => c.path === "/auth/google/token");
    assertStrictEquals(token?.body.grant_type, "urn:ietf:params:oauth:grant-type:jwt-bearer");
    const claims = decodeJwt(token?.body.assertion);
    assertEquals([claims.iss, claims.scope], [
      ACCOUNT.email,
      "https://www.googleapis.com/auth/chat.bot",
    ]);
    await settled(worker, SESSION);
    assertStrictEquals((await sessionState(worker, SESSION)).messages.length, 2);
  });
});

Deno.test("POST /webhooks/google-chat acknowledges while the model call is still running", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    fake.script(() => ({ kind: "hold" }));
    const res = await post(worker, chat, chatMessage("think hard"));
    await fake.waitForRequests(1);
    await expectOk(res, {});
    assertStrictEquals(fake.inFlight, 1);
    assertStrictEquals(chat.calls.length, 0);
    fake.release();
    await chat.waitForCalls(1);
    assertEquals(chat.calls[0].body.text, "think hard");
  });
});

Deno.test("POST /webhooks/google-chat runs one turn for a message delivered five times", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    fake.script(() => ({ kind: "hold" }));
    const first = chatMessage("slow one");
    await expectOk(await post(worker, chat, first), {});
    await fake.waitForRequests(1);
    const retries = await Promise.all(Array.from({ length: 5 }, () => post(worker, chat, first)));
    for (const res of retries) await expectOk(res, {});
    fake.release();
    await chat.waitForCalls(1);
    await settled(worker, SESSION);
    await pause(200);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(chat.calls.length, 1);
  });
});

Deno.test("POST /webhooks/google-chat runs two messages of one DM as two turns in order", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    fake.script(holdOn("first"));
    await expectOk(await post(worker, chat, chatMessage("first")), {});
    await fake.waitForRequests(1);
    await expectOk(await post(worker, chat, chatMessage("second")), {});
    await untilQueued(worker, SESSION, 1);
    await chat.waitForCalls(1);
    fake.release();
    await chat.waitForCalls(3);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second"]);
    assertEquals(chat.calls.map((c) => c.body.text), [
      "Queued — I'll answer after the current reply.",
      "first",
      "second",
    ]);
  });
});

Deno.test("POST /webhooks/google-chat sends a 10,000-character reply as ordered parts of at most 4,096, each its own message id", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    let long = "";
    for (let i = 0; long.length < 10000; i++) long += `w${i}` + (i % 10 === 9 ? "\n" : " ");
    long = long.slice(0, 10000);
    fake.script(() => ({ kind: "text", text: long }));
    await expectOk(await post(worker, chat, chatMessage("write a lot")), {});
    await settled(worker, SESSION);
    const parts = chat.calls.map((c) => c.body.text as string);
    assert(parts.length >= 3, `${parts.length} parts`);
    for (const part of parts) assert(part.length > 0 && part.length <= 4096, `${part.length}`);
    assertStrictEquals(parts.join(""), long);
    const ids = new Set(
      chat.calls.map((c) => new URL(c.path, "http://x").searchParams.get("messageId")),
    );
    assertStrictEquals(ids.size, parts.length);
  });
});

Deno.test("POST /webhooks/google-chat waits out a 429, then delivers exactly once under the same request id", async () => {
  await withPlatform(VARS, async (worker, _fake, chat) => {
    const at: number[] = [];
    chat.respond((_, index) => {
      at.push(Date.now());
      return index === 0
        ? {
          status: 429,
          headers: { "retry-after": "1" },
          body: { error: { code: 429, status: "RESOURCE_EXHAUSTED" } },
        }
        : { status: 200, body: { name: `${SPACE}/messages/r1` } };
    });
    await expectOk(await post(worker, chat, chatMessage("rate limited")), {});
    await chat.waitForCalls(2);
    await settled(worker, SESSION);
    await pause(300);
    assertStrictEquals(chat.calls.length, 2);
    assert(at[1] - at[0] >= 950, `waited ${at[1] - at[0]} ms`);
    assertEquals(chat.calls[0].body, chat.calls[1].body);
    assertStrictEquals(chat.calls[0].path, chat.calls[1].path);
  });
});

Deno.test("POST /webhooks/google-chat retries a 500 under the same request id and takes 409 as delivered", async () => {
  await withPlatform(VARS, async (worker, _fake, chat) => {
    chat.respond((_, index) =>
      index === 0
        ? { status: 500, body: { error: { code: 500, status: "INTERNAL" } } }
        : { status: 409, body: { error: { code: 409, status: "ALREADY_EXISTS" } } }
    );
    await expectOk(await post(worker, chat, chatMessage("accepted already")), {});
    await chat.waitForCalls(2);
    await settled(worker, SESSION);
    await pause(300);
    assertStrictEquals(chat.calls.length, 2);
    assertStrictEquals(chat.calls[1].body.text, "accepted already", "no resend note");
    assertStrictEquals(chat.calls[0].path, chat.calls[1].path);
  });
});

Deno.test("POST /webhooks/google-chat refuses a bad signature, wrong audience or expired token with 401 and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    const base = { issuer: GOOGLE_CHAT_ISSUER, audience: PROJECT };
    const tokens = [
      await signTestJwt(STRANGER_KEY, base),
      await signTestJwt(KEY, { ...base, audience: "999999999999" }),
      await signTestJwt(KEY, { ...base, lifetime: -600 }),
      await signTestJwt(KEY, { ...base, issuer: "someone@example.iam.gserviceaccount.com" }),
      "not-a-jwt",
      null,
    ];
    for (const token of tokens) {
      const res = await post(worker, chat, chatMessage("intruder"), { token });
      const answer = await json(res);
      assertStrictEquals(res.status, 401, JSON.stringify(answer));
      assertEquals(answer.error.type, "invalid_signature");
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(chat.calls.length, 0);
  });
});

Deno.test("POST /webhooks/google-chat acknowledges ADDED_TO_SPACE with {} and starts nothing", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    const added = {
      type: "ADDED_TO_SPACE",
      space: { name: SPACE, type: "DM" },
      user: { name: "users/1111" },
    };
    await expectOk(await post(worker, chat, added), {});
    await pause(200);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(chat.calls.length, 0);
  });
});

Deno.test("POST /webhooks/google-chat refuses with 403 and starts nothing while a secret is missing", async () => {
  for (
    const vars of [
      { GOOGLE_CHAT_AUDIENCE: PROJECT },
      { GOOGLE_CHAT_SERVICE_ACCOUNT: ACCOUNT.json },
    ]
  ) {
    await withPlatform(vars, async (worker, fake, chat) => {
      const res = await post(worker, chat, chatMessage("anyone?"));
      const body = await json(res);
      assertStrictEquals(res.status, 403, JSON.stringify(body));
      assertEquals(body.error.type, "not_configured");
      assert(!JSON.stringify(body).includes("PRIVATE KEY"));
      await pause(100);
      assertStrictEquals(fake.requests.length, 0);
      assertStrictEquals(chat.calls.length, 0);
      assertStrictEquals(chat.auth.length, 0);
    });
  }
});

Deno.test("POST /webhooks/google-chat refuses a sender outside ALLOWED_USERS and runs an allowed one", async () => {
  await withPlatform(
    { ...VARS, ACCESS_POLICY: "allowlist", ALLOWED_USERS: "google-chat:users/1111" },
    async (worker, fake, chat) => {
      const stranger = { ...chatMessage("let me in"), user: { name: "users/2222", type: "HUMAN" } };
      await post(worker, chat, stranger);
      await expectOk(await post(worker, chat, chatMessage("allowed one")), {});
      await settled(worker, SESSION);
      await pause(200);
      assertEquals(fake.requests.map((r) => r.lastUserText), ["allowed one"]);
    },
  );
});

Deno.test("POST /webhooks/google-chat answers a mention in a space in its thread, one session per thread", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    const room = "spaces/AAAAroom01";
    const thread = `${room}/threads/thr9`;
    const event = {
      type: "MESSAGE",
      space: { name: room, type: "ROOM", spaceType: "SPACE", displayName: "Team" },
      message: {
        name: `${room}/messages/x1.x1`,
        text: "@baton status?",
        argumentText: " status?",
        thread: { name: thread },
      },
      user: { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" },
    };
    await expectOk(await post(worker, chat, event), {});
    await chat.waitForCalls(1);
    await settled(worker, `google-chat:${thread}`);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["status?"]);
    assertStrictEquals(
      new URL(chat.calls[0].path, "http://x").pathname,
      `/chat/v1/${room}/messages`,
    );
    assertEquals(chat.calls[0].body, { text: "status?", thread: { name: thread } });
  });
});

// ── approval cards ──────────────────────────────────────────────────────────────────────────────

const ROOM = "spaces/AAAAroom02";
const ROOM_THREAD = `${ROOM}/threads/thr7`;
const GRACE = { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" };
const ALAN = { name: "users/2222", displayName: "Alan Turing", type: "HUMAN" };
const room = { name: ROOM, type: "ROOM", spaceType: "SPACE", displayName: "Team" };

/** A CARD_CLICKED on the question card's button `data` by `user`, as an HTTP Chat app gets it. */
function cardClick(data: string, user: typeof GRACE, eventTime = new Date().toISOString()) {
  return {
    type: "CARD_CLICKED",
    eventTime,
    space: room,
    message: { name: `${ROOM}/messages/card1.card1`, thread: { name: ROOM_THREAD } },
    user,
    action: { actionMethodName: "baton_choice", parameters: [{ key: "choice", value: data }] },
    common: { invokedFunction: "baton_choice", parameters: { choice: data } },
  };
}

/** POSTs a click; returns the webhook's answer, a message for the clicker alone. */
async function click(worker: TestWorker, chat: FakePlatform, event: unknown) {
  const res = await post(worker, chat, event);
  const body = await json(res);
  assertStrictEquals(res.status, 200, JSON.stringify(body));
  assertEquals(body.actionResponse, { type: "NEW_MESSAGE" });
  return { text: body.text as string, viewer: body.privateMessageViewer?.name as string };
}

Deno.test("POST /webhooks/google-chat: the question carries card buttons; another user's click is privately not theirs, the starter's runs the tool once, delivered twice", async () => {
  await withPlatform({ ...VARS, APPROVAL_TOOLS: "session_info" }, async (worker, fake, chat) => {
    fake.script(askThenEcho);
    const asking = {
      type: "MESSAGE",
      space: room,
      message: {
        name: `${ROOM}/messages/ask1.ask1`,
        text: "@baton who am i",
        argumentText: " who am i",
        thread: { name: ROOM_THREAD },
      },
      user: GRACE,
    };
    await expectOk(await post(worker, chat, asking), {});
    const card = () => chat.calls.find((c) => c.body?.cardsV2);
    await until(() => card() !== undefined, "the question card");
    const { body } = card()!;
    assertEquals(body.thread, { name: ROOM_THREAD });
    const buttons = body.cardsV2[0].card.sections[0].widgets[0].buttonList.buttons;
    const [once] = buttons.map((b: { onClick: { action: { parameters: { value: string }[] } } }) =>
      b.onClick.action.parameters[0].value
    );

    const notYours = await click(worker, chat, cardClick(once, ALAN));
    assertMatch(notYours.text, /^Not yours/);
    assertStrictEquals(notYours.viewer, "users/2222");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);

    const event = cardClick(once, GRACE);
    assertEquals(await click(worker, chat, event), {
      text: "Approved: session_info",
      viewer: "users/1111",
    });
    assertEquals(await click(worker, chat, event), {
      text: "Already answered",
      viewer: "users/1111",
    });
    const replies = () => chat.calls.filter((c) => String(c.body?.text).startsWith("done: "));
    await until(() => replies().length === 1, "the reply");
    await settled(worker, `google-chat:${ROOM_THREAD}`);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 1);
    assertStrictEquals(replies().length, 1);
    assertMatch(replies()[0].body.text, /"user_id":"users\/1111"/);
    assertEquals(replies()[0].body.thread, { name: ROOM_THREAD });
  });
});

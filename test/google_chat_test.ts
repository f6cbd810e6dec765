// POST /webhooks/google-chat end to end: workerd (one for the file's tests of the plain settings, the others their own), a fake model and a fake Google (Chat's key set, the OAuth token endpoint, the Chat API) on loopback; approval cards; Deno + Miniflare.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { signTestJwt } from "../lib/platforms/_jwt_fixtures.ts";
import { json, settled, until } from "./_support/clients.ts";
import { googleChatDriver as driver } from "./_support/drivers/google_chat.ts";
import type { Post } from "./_support/drivers/mod.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const VARS = driver.vars();
const SPACE = "spaces/AAAAdm0001";
const SESSION = `google-chat:${SPACE}`;

// One Worker for the file's tests of VARS, each in spaces and as users of its own; a test of
// other settings starts its own.
const baton = sharedBaton({ vars: VARS });

/** A DM space and its user, of one test's own on the shared Worker. */
function dmOf(n: number): { space: string; user: string } {
  return { space: `spaces/AAAAdm01${String(n).padStart(2, "0")}`, user: `users/${1100 + n}` };
}

let _next = 1;

type Event = Record<string, unknown>;

/** googleChatDriver's MESSAGE event of `post`, its message named `<chat>/messages/<id>`. */
function shaped(post: Post): Event {
  return driver.shape({ ...post, id: `${post.chat}/messages/${post.id}` }) as Event;
}

/** A MESSAGE event in the DM with Grace (or `at`'s), as an HTTP Chat app receives it. */
function chatMessage(
  text: string,
  at: { space: string; user: string } = { space: SPACE, user: "users/1111" },
  id = `m${_next++}.m`,
) {
  return shaped({ chat: at.space, text, id, from: { id: at.user, name: "Grace Hopper" } });
}

/** POSTs an event under googleChatDriver's bearer JWT, its key published on `platform`. */
async function post(worker: TestWorker, platform: FakePlatform, body: unknown): Promise<Response> {
  driver.vars(platform);
  const text = JSON.stringify(body);
  const headers = await driver.sign(text, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body: text });
}

baton.test(
  "POST /webhooks/google-chat retries a 500 under the same request id and takes 409 as delivered",
  async (worker, _fake, chat) => {
    chat.respond((_, index) =>
      index === 0
        ? { status: 500, body: { error: { code: 500, status: "INTERNAL" } } }
        : { status: 409, body: { error: { code: 409, status: "ALREADY_EXISTS" } } }
    );
    const at = dmOf(1);
    await expectOk(await post(worker, chat, chatMessage("accepted already", at)), {});
    await chat.waitForCalls(2);
    await settled(worker, `google-chat:${at.space}`);
    await pause(300);
    assertStrictEquals(chat.calls.length, 2);
    assertStrictEquals(chat.calls[1].body.text, "accepted already", "no resend note");
    assertStrictEquals(chat.calls[0].path, chat.calls[1].path);
  },
);

baton.test(
  "POST /webhooks/google-chat acknowledges ADDED_TO_SPACE with {} and starts nothing",
  async (worker, fake, chat) => {
    const at = dmOf(2);
    const added = {
      type: "ADDED_TO_SPACE",
      space: { name: at.space, type: "DM" },
      user: { name: at.user },
    };
    await expectOk(await post(worker, chat, added), {});
    await pause(200);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(chat.calls.length, 0);
  },
);

// Its own Worker: on the shared one the key set and the app's token may be cached already.
Deno.test("POST /webhooks/google-chat waits out a 429 with Retry-After on the key set and on the app's token once each: the message is answered", async () => {
  await withPlatform(VARS, async (worker, fake, chat) => {
    const limited = new Set<string>();
    chat.respondToAuth((call, i, usual) => {
      const path = call.path.split("?")[0];
      if (limited.has(path) || !/\/(jwks|token)$/.test(path)) return usual(call, i);
      limited.add(path);
      return { status: 429, body: { error: "throttled" }, headers: { "retry-after": "1" } };
    });
    await expectOk(await post(worker, chat, chatMessage("after the wait")), {});
    await chat.waitForCalls(1);
    await settled(worker, SESSION);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["after the wait"]);
    assertStrictEquals(chat.calls.length, 1);
    const asked = (end: string) => chat.auth.filter((c) => c.path.endsWith(end)).length;
    assertEquals([asked("/jwks"), asked("/token")], [2, 2], "each asked again once");
  });
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

baton.test(
  "POST /webhooks/google-chat answers a mention in a space in its thread, one session per thread",
  async (worker, fake, chat) => {
    const room = "spaces/AAAAroom01";
    const thread = `${room}/threads/thr9`;
    const from = { id: "users/1104", name: "Grace Hopper" };
    const said = { chat: room, text: "status?", id: "x1.x1", from, thread };
    const event = shaped({ ...said, group: true, mention: true });
    await expectOk(await post(worker, chat, event), {});
    await chat.waitForCalls(1);
    await settled(worker, `google-chat:${thread}`);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["status?"]);
    assertStrictEquals(
      new URL(chat.calls[0].path, "http://x").pathname,
      `/chat/v1/${room}/messages`,
    );
    assertEquals(chat.calls[0].body, { text: "status?", thread: { name: thread } });
  },
);

// ── approval cards ──────────────────────────────────────────────────────────────────────────────

const ROOM = "spaces/AAAAroom02";
const ROOM_THREAD = `${ROOM}/threads/thr7`;
const GRACE = { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" };
const ALAN = { name: "users/2222", displayName: "Alan Turing", type: "HUMAN" };
const room = { name: ROOM, type: "ROOM", spaceType: "SPACE", displayName: "Team" };

/** A CARD_CLICKED on the question card's button `data` by `user`, as an HTTP Chat app gets it. */
function cardClick(data: string, user: typeof GRACE) {
  // googleChatDriver's event in the room, its message the card's: a click carries no text.
  const from = { id: user.name, name: user.displayName };
  const said = { chat: ROOM, text: "", id: "card1.card1", from, group: true, thread: ROOM_THREAD };
  return {
    ...shaped(said),
    type: "CARD_CLICKED",
    space: room,
    message: { name: `${ROOM}/messages/card1.card1`, thread: { name: ROOM_THREAD } },
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
    const said = { chat: ROOM, text: "who am i", id: "ask1.ask1", thread: ROOM_THREAD };
    const asking = { ...shaped({ ...said, group: true, mention: true }), space: room };
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

Deno.test("POST /webhooks/google-chat: an app built as a Workspace add-on — its agent's ID token, a chat.messagePayload event — runs one turn, answered {}, the reply posted through the Chat API in the thread", async () => {
  const endpoint = "https://baton.example.com/webhooks/google-chat";
  const vars = {
    GOOGLE_CHAT_AUDIENCE: endpoint,
    GOOGLE_CHAT_ADDON_PROJECT_NUMBER: "123456789012",
    GOOGLE_CHAT_SERVICE_ACCOUNT: VARS.GOOGLE_CHAT_SERVICE_ACCOUNT,
  };
  const room = "spaces/AAAAroom05";
  const thread = `${room}/threads/thr5`;
  const grace = { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" };
  // The add-on event object (googleworkspace/add-ons-samples node/chat/*): the message under
  // chat.messagePayload, the sender as chat.user, the token also in authorizationEventObject.
  // Not Chat's own token (another issuer, the add-on agent's email): signed here with the
  // driver's key, which the platform publishes.
  const token = await signTestJwt(driver.credentials.key, {
    issuer: "https://accounts.google.com",
    audience: endpoint,
    claims: {
      email: "service-123456789012@gcp-sa-gsuiteaddons.iam.gserviceaccount.com",
      email_verified: true,
    },
  });
  const event = {
    commonEventObject: { hostApp: "CHAT", platform: "WEB" },
    authorizationEventObject: { systemIdToken: token },
    chat: {
      user: grace,
      eventTime: new Date().toISOString(),
      messagePayload: {
        space: { name: room, type: "ROOM", spaceType: "SPACE", displayName: "Team" },
        message: {
          name: `${room}/messages/a1.a1`,
          sender: grace,
          text: "@baton add-on here?",
          argumentText: " add-on here?",
          thread: { name: thread },
        },
      },
    },
  };
  await withPlatform(vars, async (worker, fake, chat) => {
    driver.vars(chat);
    const deliver = () =>
      worker.fetch("/webhooks/google-chat", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(event),
      });
    await expectOk(await deliver(), {});
    await chat.waitForCalls(1);
    await settled(worker, `google-chat:${thread}`);
    // A redelivery of the same message starts nothing more.
    await expectOk(await deliver(), {});
    await settled(worker, `google-chat:${thread}`);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["add-on here?"]);
    assertStrictEquals(chat.calls.length, 1);
    assertStrictEquals(
      new URL(chat.calls[0].path, "http://x").pathname,
      `/chat/v1/${room}/messages`,
    );
    assertEquals(chat.calls[0].body, { text: "add-on here?", thread: { name: thread } });
  });
});

baton.done();

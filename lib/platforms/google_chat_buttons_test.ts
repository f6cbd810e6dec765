// Unit tests of approval buttons in the Google Chat adapter: a card of buttons in the send body, CARD_CLICKED events parsed, clicks answered privately in the webhook's answer; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import {
  approvalClickText,
  type Choice,
  type Ingress,
  PayloadError,
  type PlatformChoice,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { googleChatAdapter, type GoogleChatTarget } from "./google_chat.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { testServiceAccount } from "./_jwt_fixtures.ts";
import { withFetch } from "./_fetch_stub.ts";

const TOKEN_URL = "http://oauth2.chat.test/token";
const ENV = {
  GOOGLE_CHAT_AUDIENCE: "123456789012",
  GOOGLE_CHAT_SERVICE_ACCOUNT: (await testServiceAccount()).json,
  GOOGLE_CHAT_TOKEN_URL: TOKEN_URL,
  GOOGLE_CHAT_API_ROOT: "http://chat.test/v1",
};
const ROOM = "spaces/AAAAroom01";
const THREAD = `${ROOM}/threads/thr0001`;
const CARD = `${ROOM}/messages/card0001.card0001`;
const CHOICES: Choice[] = approvalButtons(7, "call_abc");
const ONCE = CHOICES[0].data;

/** Alan's click on a card button in a space's thread (`over` merged in), as Chat sends it. */
function click(data: unknown, over: Record<string, unknown> = {}) {
  return {
    type: "CARD_CLICKED",
    eventTime: "2026-11-23T08:00:05.123456Z",
    space: { name: ROOM, type: "ROOM", spaceType: "SPACE", displayName: "Team room" },
    message: {
      name: CARD,
      sender: { name: "users/app", type: "BOT" },
      thread: { name: THREAD },
    },
    user: { name: "users/2222", displayName: "Alan Turing", type: "HUMAN" },
    action: { actionMethodName: "baton_choice", parameters: [{ key: "choice", value: data }] },
    common: {
      hostApp: "CHAT",
      invokedFunction: "baton_choice",
      parameters: { choice: data },
    },
    ...over,
  };
}

function parse(event: unknown): Ingress<GoogleChatTarget> {
  return googleChatAdapter.parse({
    headers: new Headers({ "content-type": "application/json" }),
    body: new TextEncoder().encode(JSON.stringify(event)),
    url: "https://baton.test/webhooks/google-chat",
    nowSeconds: 0,
  }, ENV);
}

function choiceOf(ingress: Ingress<GoogleChatTarget>): PlatformChoice<GoogleChatTarget> {
  if (ingress.kind !== "choice") throw new Error(`expected a choice: ${JSON.stringify(ingress)}`);
  return ingress.choice;
}

Deno.test("googleChatAdapter.send() puts a notice's choices in a card's buttonList under its text", async () => {
  resetJwtCaches();
  await withFetch(
    (call) =>
      call.url === TOKEN_URL
        ? Response.json({ access_token: "ya29.t", expires_in: 3600 })
        : Response.json({ name: `${ROOM}/messages/r1` }),
    async (calls) => {
      const target = { platform: "google-chat" as const, space: ROOM, thread: THREAD };
      const part = { index: 0, count: 1, marker: "q1", choices: CHOICES };
      assertEquals(await googleChatAdapter.send(target, "Run session_info?", part, ENV), {
        ok: true,
      });
      await googleChatAdapter.send(target, "plain", { index: 0, count: 1, marker: "p1" }, ENV);
      const [, question, plain] = calls;
      const { text, thread, cardsV2 } = question.body;
      assertEquals([text, thread], ["Run session_info?", { name: THREAD }]);
      assertStrictEquals(cardsV2.length, 1);
      assertStrictEquals(cardsV2[0].cardId, "baton-choices");
      const [section] = cardsV2[0].card.sections;
      const buttons = section.widgets[0].buttonList.buttons;
      assertEquals(buttons[0], {
        text: "Approve once",
        type: "FILLED",
        onClick: {
          action: { function: "baton_choice", parameters: [{ key: "choice", value: ONCE }] },
        },
      });
      assertEquals(
        buttons.map((
          b: { text: string; onClick: { action: { parameters: { value: string }[] } } },
        ) => [b.text, b.onClick.action.parameters[0].value]),
        CHOICES.map((c) => [c.label, c.data]),
      );
      assertEquals(plain.body, { text: "plain", thread: { name: THREAD } });
    },
  );
});

Deno.test("googleChatAdapter.parse() turns a CARD_CLICKED on baton's button into a choice by the clicker, in the card's thread", () => {
  assertEquals(choiceOf(parse(click(ONCE))), {
    sessionKey: `google-chat:${THREAD}`,
    deliveryKey: `google-chat:click:${CARD}:users/2222:2026-11-23T08:00:05.123456Z`,
    data: ONCE,
    context: {
      platform: "google-chat",
      session_key: `google-chat:${THREAD}`,
      chat_id: ROOM,
      chat_name: "Team room",
      thread_id: THREAD,
      user_id: "users/2222",
      user_name: "Alan Turing",
      message_id: CARD,
    },
    reply: { platform: "google-chat", space: ROOM, thread: THREAD },
    sender: { platform: "google-chat", user: "users/2222", name: "Alan Turing", direct: false },
  });
  // Only the older `action` fields (no `common`): the same choice.
  const legacy = choiceOf(parse(click(ONCE, { common: undefined })));
  assertEquals([legacy.data, legacy.sessionKey], [ONCE, `google-chat:${THREAD}`]);
  // In a DM the session is the DM's, thread or not.
  const dm = choiceOf(parse(click(ONCE, {
    space: { name: "spaces/AAAAdm0001", type: "DM", singleUserBotDm: true },
    message: {
      name: "spaces/AAAAdm0001/messages/c.c",
      thread: { name: "spaces/AAAAdm0001/threads/t" },
    },
  })));
  assertEquals([dm.sessionKey, dm.sender.direct], ["google-chat:spaces/AAAAdm0001", true]);
});

Deno.test("googleChatAdapter.parse() acknowledges clicks that are not baton's with {}, and answers a malformed CARD_CLICKED with PayloadError", () => {
  const ignored = { kind: "respond", status: 200, body: {} };
  const otherFunction = { invokedFunction: "vote", parameters: { choice: ONCE } };
  for (
    const event of [
      click("approve"),
      click(42),
      click(ONCE, { common: otherFunction, action: { actionMethodName: "vote" } }),
      click(ONCE, {
        common: { invokedFunction: "baton_choice", parameters: { other: ONCE } },
        action: { actionMethodName: "baton_choice", parameters: [{ key: "other", value: ONCE }] },
      }),
      click(ONCE, { user: { name: "users/app2", type: "BOT" } }),
    ]
  ) {
    assertEquals(parse(event), ignored, JSON.stringify(event));
  }
  for (
    const bad of [
      { type: "CARD_CLICKED" },
      click(ONCE, { user: undefined }),
      click(ONCE, { message: undefined }),
      click(ONCE, { space: { name: "spaces/../../v1/other" } }),
      click(ONCE, { action: { parameters: "choice=x" } }),
    ]
  ) {
    assert(assertThrows(() => parse(bad)) instanceof PayloadError, JSON.stringify(bad));
  }
});

Deno.test("googleChatAdapter.answerChoice() answers in the webhook's response: a new message only the clicker sees in a space", async () => {
  const inRoom = choiceOf(parse(click(ONCE)));
  assertEquals(await googleChatAdapter.answerChoice!(inRoom, { kind: "not_yours" }, ENV), {
    status: 200,
    body: {
      actionResponse: { type: "NEW_MESSAGE" },
      text: approvalClickText({ kind: "not_yours" }),
      privateMessageViewer: { name: "users/2222" },
    },
  });
  const inDm = choiceOf(parse(click(ONCE, {
    space: { name: "spaces/AAAAdm0001", type: "DM" },
    message: { name: "spaces/AAAAdm0001/messages/c.c" },
  })));
  assertEquals(
    await googleChatAdapter.answerChoice!(inDm, {
      kind: "answered",
      tool: "session_info",
      choice: "once",
    }, ENV),
    {
      status: 200,
      body: { actionResponse: { type: "NEW_MESSAGE" }, text: "Approved: session_info" },
    },
  );
  // Chat has no typing indicator an app can set.
  assertStrictEquals(googleChatAdapter.typing, undefined);
});

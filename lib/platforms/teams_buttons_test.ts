// Unit tests of approval buttons and typing in the Teams adapter: Adaptive Card in the send body, Action.Submit clicks parsed and answered, typing activities over a stubbed fetch; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import {
  approvalClickText,
  type Choice,
  type ClickAnswer,
  type Ingress,
  PayloadError,
  type PlatformChoice,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { teamsAdapter, type TeamsTarget } from "./teams.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";

const APP_ID = "8e2f1d6a-3b1c-4f0e-9a7d-5c6b4a3f2e1d";
const TOKEN_URL = "http://token.teams.test/oauth2/v2.0/token";
const ENV = {
  TEAMS_APP_ID: APP_ID,
  TEAMS_APP_PASSWORD: "teams-app-password-0123456789",
  TEAMS_TOKEN_URL: TOKEN_URL,
};
const SERVICE_URL = "https://smba.trafficmanager.net/amer/";
const GROUP = "19:group-chat-1@thread.v2";
const ACTIVITIES = `${SERVICE_URL}v3/conversations/${encodeURIComponent(GROUP)}/activities`;
const CHOICES: Choice[] = approvalButtons(7, "call_abc");
const ONCE = CHOICES[0].data;
const TARGET: TeamsTarget = {
  platform: "teams",
  serviceUrl: SERVICE_URL,
  conversation: GROUP,
  replyTo: "1700000000001",
};

/** Answers the token endpoint, and the Bot Connector with `connector` (default 201). */
function platform(connector?: (call: FetchCall) => Response) {
  return (call: FetchCall): Response => {
    if (call.url === TOKEN_URL) {
      return Response.json({ access_token: "bf-token", expires_in: 3600 });
    }
    return connector?.(call) ?? Response.json({ id: "1:sent" }, { status: 201 });
  };
}

/** Bob's click on a card button in a group chat, as Teams sends an `Action.Submit`. */
function click(value: unknown, over: Record<string, unknown> = {}) {
  return {
    type: "message",
    id: "1700000000123",
    timestamp: "2026-11-23T08:00:05.000Z",
    serviceUrl: SERVICE_URL,
    channelId: "msteams",
    from: { id: "29:1bob", name: "Bob Kahn", aadObjectId: "aad-bob-0002" },
    conversation: { id: GROUP, conversationType: "groupChat", isGroup: true, tenantId: "t-1" },
    recipient: { id: `28:${APP_ID}`, name: "baton" },
    replyToId: "1700000000050",
    value,
    channelData: { tenant: { id: "t-1" } },
    ...over,
  };
}

function parse(activity: unknown): Ingress<TeamsTarget> {
  return teamsAdapter.parse({
    headers: new Headers({ "content-type": "application/json" }),
    body: new TextEncoder().encode(JSON.stringify(activity)),
    url: "https://baton.test/webhooks/teams",
    nowSeconds: 0,
  }, ENV);
}

function choiceOf(ingress: Ingress<TeamsTarget>): PlatformChoice<TeamsTarget> {
  if (ingress.kind !== "choice") throw new Error(`expected a choice: ${JSON.stringify(ingress)}`);
  return ingress.choice;
}

Deno.test("teamsAdapter.send() shows a notice's choices as an Adaptive Card with one Action.Submit each", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    const asked = await teamsAdapter.send(TARGET, "Run `session_info`?", {
      index: 0,
      count: 1,
      choices: CHOICES,
    }, ENV);
    assertEquals(asked, { ok: true });
    await teamsAdapter.send(TARGET, "plain", { index: 0, count: 1 }, ENV);
    const [, question, plain] = calls;
    assertStrictEquals(question.url, ACTIVITIES);
    assertStrictEquals(question.headers.get("authorization"), "Bearer bf-token");
    const { type, attachments, replyToId, text } = question.body;
    assertEquals([type, replyToId, text], ["message", "1700000000001", undefined]);
    assertStrictEquals(attachments.length, 1);
    assertStrictEquals(attachments[0].contentType, "application/vnd.microsoft.card.adaptive");
    const card = attachments[0].content;
    assertEquals([card.type, card.version], ["AdaptiveCard", "1.2"]);
    assertEquals(card.body, [{ type: "TextBlock", text: "Run `session_info`?", wrap: true }]);
    assertEquals(card.actions, [
      {
        type: "Action.Submit",
        title: "Approve once",
        data: { baton_choice: ONCE },
        style: "positive",
      },
      { type: "Action.Submit", title: "This session", data: { baton_choice: CHOICES[1].data } },
      { type: "Action.Submit", title: "Always", data: { baton_choice: CHOICES[2].data } },
      {
        type: "Action.Submit",
        title: "Deny",
        data: { baton_choice: CHOICES[3].data },
        style: "destructive",
      },
    ]);
    assertEquals(plain.body, {
      type: "message",
      text: "plain",
      textFormat: "markdown",
      replyToId: "1700000000001",
    });
  });
});

Deno.test("teamsAdapter.parse() turns an Action.Submit click into a choice by the clicker, in the card's conversation", () => {
  assertEquals(choiceOf(parse(click({ baton_choice: ONCE }))), {
    sessionKey: `teams:${GROUP}`,
    deliveryKey: `teams:click:${GROUP}:1700000000123`,
    data: ONCE,
    context: {
      platform: "teams",
      session_key: `teams:${GROUP}`,
      chat_id: GROUP,
      chat_name: "",
      thread_id: "",
      user_id: "aad-bob-0002",
      user_name: "Bob Kahn",
      message_id: "1700000000050",
    },
    reply: {
      platform: "teams",
      serviceUrl: SERVICE_URL,
      conversation: GROUP,
      replyTo: "1700000000050",
    },
    sender: { platform: "teams", user: "aad-bob-0002", name: "Bob Kahn", direct: false },
  });
  // A channel thread's click needs no mention; a personal chat's clicker is direct.
  const thread = "19:abc@thread.tacv2;messageid=1700000000000";
  const channel = choiceOf(parse(click({ baton_choice: ONCE }, {
    conversation: { id: thread, conversationType: "channel", isGroup: true },
  })));
  assertEquals([channel.sessionKey, channel.sender.direct], [`teams:${thread}`, false]);
  const personal = choiceOf(parse(click({ baton_choice: ONCE }, {
    conversation: { id: "a:1personal", conversationType: "personal" },
    replyToId: undefined,
  })));
  assertEquals(
    [personal.sender.direct, personal.reply.replyTo, personal.context.message_id],
    [true, "1700000000123", "1700000000123"],
  );
});

Deno.test("teamsAdapter.parse() acknowledges submits that are not baton's, and answers a malformed click with PayloadError", () => {
  for (
    const value of [
      { baton_choice: "approve" },
      { baton_choice: 42 },
      { other: ONCE },
      ONCE, // data as a bare string: not the object baton's cards carry
      null,
      { baton_choice: `${ONCE}${"x".repeat(64)}` },
    ]
  ) {
    const ingress = parse(click(value));
    assertEquals(ingress, {
      kind: "respond",
      status: 200,
      body: { ok: true, ignored: "not baton's card" },
    }, JSON.stringify(value));
  }
  const { from: _, ...anonymous } = click({ baton_choice: ONCE });
  for (
    const bad of [anonymous, click({ baton_choice: ONCE }, { serviceUrl: "javascript:x" })]
  ) {
    assert(assertThrows(() => parse(bad)) instanceof PayloadError);
  }
});

Deno.test("teamsAdapter.answerChoice() tells the conversation only of a click refused as not the clicker's, and answers 200", async () => {
  resetJwtCaches();
  const choice = choiceOf(parse(click({ baton_choice: ONCE })));
  const silent: ClickAnswer[] = [
    { kind: "answered", tool: "session_info", choice: "once" },
    { kind: "answered", tool: "session_info", choice: "deny" },
    { kind: "not_pending" },
    { kind: "not_allowed" },
  ];
  const notYours = approvalClickText({ kind: "not_yours" });
  await withFetch(platform(), async (calls) => {
    for (const answer of silent) {
      assertEquals(await teamsAdapter.answerChoice!(choice, answer, ENV), {
        status: 200,
        body: { ok: true },
      });
    }
    assertStrictEquals(calls.length, 0);
    assertEquals(await teamsAdapter.answerChoice!(choice, { kind: "not_yours" }, ENV), {
      status: 200,
      body: { ok: true },
    });
    const posts = calls.filter((c) => c.url !== TOKEN_URL);
    assertEquals(posts.map((c) => c.url), [ACTIVITIES]);
    assertEquals(posts[0].body, {
      type: "message",
      text: `Bob Kahn: ${notYours}`,
      replyToId: "1700000000050",
    });
  });
  // A connector that fails leaves the click answered all the same.
  await withFetch(platform(() => new Response("{}", { status: 500 })), async () => {
    assertEquals(await teamsAdapter.answerChoice!(choice, { kind: "not_yours" }, ENV), {
      status: 200,
      body: { ok: true },
    });
  });
});

Deno.test("teamsAdapter.typing() posts a typing activity to the conversation with the bot's token", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    assertStrictEquals(await teamsAdapter.typing!(TARGET, ENV), true);
    assertStrictEquals(await teamsAdapter.typing!(TARGET, ENV), true);
    assertEquals(calls.map((c) => c.url), [TOKEN_URL, ACTIVITIES, ACTIVITIES]);
    assertEquals(calls[1].body, { type: "typing" });
    assertStrictEquals(calls[1].headers.get("authorization"), "Bearer bf-token");
  });
});

Deno.test("teamsAdapter.typing() is false, never a throw, on a 429, a 412, a 500, a lost connection or a refused token", async () => {
  const answers: (() => Response)[] = [
    () => new Response("{}", { status: 429, headers: { "retry-after": "2" } }),
    () => new Response("{}", { status: 412 }),
    () => new Response("{}", { status: 500 }),
    () => {
      throw new TypeError("connection reset");
    },
  ];
  for (const answer of answers) {
    resetJwtCaches();
    await withFetch(platform(answer), async () => {
      assertStrictEquals(await teamsAdapter.typing!(TARGET, ENV), false);
    });
  }
  resetJwtCaches();
  await withFetch(() => Response.json({ error: "invalid_client" }, { status: 401 }), async () => {
    assertStrictEquals(await teamsAdapter.typing!(TARGET, ENV), false);
  });
});

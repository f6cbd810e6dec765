// Unit tests of approval buttons and the loading animation in the LINE adapter: postbacks parsed, quick replies in the push body, clicks answered by reply token; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import {
  approvalClickText,
  type ClickAnswer,
  type Ingress,
  PayloadError,
  type PlatformChoice,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { lineAdapter, type LineTarget, signLinePayload } from "./line.ts";
import { withFetch } from "./_fetch_stub.ts";

const SECRET = "line-channel-secret-0123456789ab";
const ENV = {
  LINE_CHANNEL_SECRET: SECRET,
  LINE_CHANNEL_ACCESS_TOKEN: "line-channel-access-token-value",
  LINE_API_ROOT: "http://line.test",
};
const USER = "U4af4980629d6f5ad8b9f0a8b3a5cf1e2";
const GROUP = "Ca56f94637c3f7b6c0e3b9d1f0e0a0b0c";
const CHOICES = approvalButtons(7, "call_abc");
const ONCE = CHOICES[0].data;
const IGNORED = { kind: "respond", status: 200, body: { ok: true } };

/** A `postback` event as the Messaging API documents it (a 1:1 chat unless `source` is given). */
function postback(
  data: string,
  opts: { id?: string; redelivery?: boolean; source?: unknown; mode?: string } = {},
) {
  return {
    type: "postback",
    mode: opts.mode ?? "active",
    timestamp: 1_692_251_666_727,
    webhookEventId: opts.id ?? "01FZ74A0TDDPYRVKNK77XKC3ZR",
    deliveryContext: { isRedelivery: opts.redelivery ?? false },
    source: opts.source ?? { type: "user", userId: USER },
    replyToken: "b60d432864f44d079f6d8efe86cf404b",
    postback: { data },
  };
}

function text(body: string, id: string) {
  return {
    type: "message",
    mode: "active",
    timestamp: 1_692_251_666_727,
    webhookEventId: id,
    deliveryContext: { isRedelivery: false },
    source: { type: "user", userId: USER },
    replyToken: "38ef843bde154d9b91c21320ffd17a0f",
    message: { type: "text", id: "468789577898262530", quoteToken: "q", text: body },
  };
}

async function parse(events: unknown[]): Promise<Ingress<LineTarget>> {
  const body = JSON.stringify({ destination: "Uxxxxxxxx", events });
  const request = {
    headers: new Headers({ "x-line-signature": await signLinePayload(SECRET, body) }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/line",
    // A second after the events' (documented sample) timestamp: none is refused as a replay.
    nowSeconds: 1_692_251_667,
  };
  assertStrictEquals(await lineAdapter.verify(request, ENV), null);
  return lineAdapter.parse(request, ENV);
}

function choiceOf(ingress: Ingress<LineTarget>): PlatformChoice<LineTarget> {
  if (ingress.kind !== "choice") throw new Error(`expected a choice: ${JSON.stringify(ingress)}`);
  return ingress.choice;
}

Deno.test("lineAdapter.parse() turns a postback of baton's quick reply into a choice, its clicker bound as a message's sender", async () => {
  const choice = choiceOf(await parse([postback(ONCE)]));
  assertEquals(choice, {
    sessionKey: `line:user:${USER}`,
    deliveryKey: "line:01FZ74A0TDDPYRVKNK77XKC3ZR",
    data: ONCE,
    context: {
      platform: "line",
      session_key: `line:user:${USER}`,
      chat_id: USER,
      chat_name: "",
      thread_id: "",
      user_id: USER,
      user_name: USER,
      message_id: "01FZ74A0TDDPYRVKNK77XKC3ZR",
    },
    reply: { platform: "line", to: USER },
    sender: { platform: "line", user: USER, name: USER, direct: true },
    handle: "b60d432864f44d079f6d8efe86cf404b",
  });
  const message = await parse([text("hi", "01FZ74A0TDDPYRVKNK77XKC3ZR")]);
  if (message.kind !== "message") throw new Error("expected a message");
  const { text: _, context: mc, ...who } = message.message;
  const { data: __, handle: ___, context: cc, ...clicker } = choice;
  assertEquals(clicker, who);
  assertEquals({ ...cc, message_id: "" }, { ...mc, message_id: "" });
});

Deno.test("lineAdapter.parse() keys a group's postback by the group, from its userId", async () => {
  const source = { type: "group", groupId: GROUP, userId: USER };
  const choice = choiceOf(await parse([postback(ONCE, { source })]));
  assertEquals([choice.sessionKey, choice.reply, choice.sender], [
    `line:group:${GROUP}`,
    { platform: "line", to: GROUP },
    { platform: "line", user: USER, name: USER, direct: false },
  ]);
});

Deno.test("lineAdapter.parse() gives a redelivered postback no reply token: its first delivery was answered", async () => {
  const choice = choiceOf(await parse([postback(ONCE, { redelivery: true })]));
  assertStrictEquals(choice.deliveryKey, "line:01FZ74A0TDDPYRVKNK77XKC3ZR");
  assertStrictEquals(choice.handle, undefined);
});

Deno.test("lineAdapter.parse() acknowledges postbacks that are not baton's, in standby, or without a user", async () => {
  assertEquals(await parse([postback("action=buy&itemid=111")]), IGNORED);
  assertEquals(await parse([postback(`bt:${"x".repeat(80)}`)]), IGNORED);
  assertEquals(await parse([postback(ONCE, { mode: "standby" })]), IGNORED);
  assertEquals(
    await parse([postback(ONCE, { source: { type: "group", groupId: GROUP } })]),
    IGNORED,
  );
  assertEquals(await parse([{ ...postback(ONCE), postback: { params: {} } }]), IGNORED);
});

Deno.test("lineAdapter.parse() answers the postbacks of a delivery batched with messages first, and keeps the messages", async () => {
  const ingress = await parse([text("first", "01EVENTA"), postback(ONCE, { id: "01EVENTB" })]);
  if (ingress.kind !== "messages") throw new Error(`expected messages: ${ingress.kind}`);
  assertEquals(ingress.messages.map((m) => m.text), ["first"]);
  assertEquals(ingress.choices?.map((c) => [c.deliveryKey, c.data]), [["line:01EVENTB", ONCE]]);
});

Deno.test("lineAdapter.parse() throws PayloadError for a postback whose body is not JSON", () => {
  const body = new TextEncoder().encode(JSON.stringify({ events: [postback(ONCE)] }).slice(0, -3));
  const request = { headers: new Headers(), body, url: "https://baton.test/", nowSeconds: 0 };
  assert(assertThrows(() => lineAdapter.parse(request, ENV)) instanceof PayloadError);
});

Deno.test("lineAdapter.send() attaches a question's choices as postback quick replies to its message", async () => {
  await withFetch(() => Response.json({ sentMessages: [] }), async (calls) => {
    const target: LineTarget = { platform: "line", to: USER };
    await lineAdapter.send(target, "Approve?", { index: 0, count: 1, choices: CHOICES }, ENV);
    await lineAdapter.send(target, "plain", { index: 0, count: 1 }, ENV);
    assertStrictEquals(calls[0].url, "http://line.test/v2/bot/message/push");
    assertEquals(calls[0].body, {
      to: USER,
      messages: [{
        type: "text",
        text: "Approve?",
        quickReply: {
          items: CHOICES.map((c) => ({
            type: "action",
            action: { type: "postback", label: c.label, data: c.data, displayText: c.label },
          })),
        },
      }],
    });
    assertEquals(calls[1].body.messages, [{ type: "text", text: "plain" }]);
    const long = [{ label: "A label much longer than twenty", data: "bt:1" }];
    await lineAdapter.send(target, "Pick", { index: 0, count: 1, choices: long }, ENV);
    assertStrictEquals(calls[2].body.messages[0].quickReply.items[0].action.label.length, 20);
  });
});

Deno.test("lineAdapter.answerChoice() replies with the postback's token only what a click that did nothing must say", async () => {
  const choice = choiceOf(await parse([postback(ONCE)]));
  const notYours = approvalClickText({ kind: "not_yours" });
  const answers: ClickAnswer[] = [
    { kind: "answered", tool: "session_info", choice: "once" },
    { kind: "not_allowed" },
    { kind: "not_yours" },
  ];
  await withFetch(() => Response.json({}), async (calls) => {
    for (const answer of answers) {
      assertEquals(await lineAdapter.answerChoice!(choice, answer, ENV), {
        status: 200,
        body: { ok: true },
      });
    }
    // A redelivery has no token: its first delivery was answered.
    const { handle: _, ...redelivered } = choice;
    await lineAdapter.answerChoice!(redelivered, { kind: "not_pending" }, ENV);
    assertStrictEquals(calls.length, 1);
    assertEquals([calls[0].url, calls[0].body], [
      "http://line.test/v2/bot/message/reply",
      {
        replyToken: "b60d432864f44d079f6d8efe86cf404b",
        messages: [{ type: "text", text: notYours }],
      },
    ]);
    assertStrictEquals(
      calls[0].headers.get("authorization"),
      `Bearer ${ENV.LINE_CHANNEL_ACCESS_TOKEN}`,
    );
  });
  await withFetch(
    () => Response.json({ message: "Invalid reply token" }, { status: 400 }),
    async () => {
      assertStrictEquals(
        (await lineAdapter.answerChoice!(choice, { kind: "not_yours" }, ENV)).status,
        200,
      );
    },
  );
});

Deno.test("lineAdapter.typing() starts the loading animation in a 1:1 chat; groups and rooms get none", async () => {
  await withFetch(() => new Response("{}", { status: 202 }), async (calls) => {
    assertStrictEquals(await lineAdapter.typing!({ platform: "line", to: USER }, ENV), true);
    assertEquals([calls[0].url, calls[0].body], [
      "http://line.test/v2/bot/chat/loading/start",
      { chatId: USER, loadingSeconds: 10 },
    ]);
    assertStrictEquals(await lineAdapter.typing!({ platform: "line", to: GROUP }, ENV), false);
    const room = "Ra56f94637c3f7b6c0e3b9d1f0e0a0b0c";
    assertStrictEquals(await lineAdapter.typing!({ platform: "line", to: room }, ENV), false);
    assertStrictEquals(calls.length, 1);
  });
});

Deno.test("lineAdapter.typing() is false, and never throws, on a 429 or a failure", async () => {
  const target: LineTarget = { platform: "line", to: USER };
  await withFetch(
    (_, i) =>
      i === 0
        ? Response.json({ message: "Too Many Requests" }, { status: 429 })
        : Promise.reject(new Error("connection reset")),
    async () => {
      assertStrictEquals(await lineAdapter.typing!(target, ENV), false);
      assertStrictEquals(await lineAdapter.typing!(target, ENV), false);
    },
  );
});

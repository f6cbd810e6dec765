// Unit tests of approval buttons and typing in the WhatsApp adapter: taps parsed, buttons or a list in the send body, clicks answered, the typing indicator; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import {
  approvalClickText,
  type ClickAnswer,
  type Ingress,
  PayloadError,
  type PlatformChoice,
  type RawRequest,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { signWhatsappPayload, whatsappAdapter, type WhatsappTarget } from "./whatsapp.ts";
import { withFetch } from "./_fetch_stub.ts";

const APP_SECRET = "wa-app-secret-0123456789abcdef";
const PHONE_ID = "106540352242922";
const CUSTOMER = "16505551234";
const ENV = {
  WHATSAPP_APP_SECRET: APP_SECRET,
  WHATSAPP_VERIFY_TOKEN: "wa-verify-token_42",
  WHATSAPP_ACCESS_TOKEN: "EAAGwa-access-token-value",
  WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
  WHATSAPP_API_ROOT: "http://graph.test/v21.0",
};
const CHOICES = approvalButtons(7, "call_abc");
const ONCE = CHOICES[0].data;
const QUESTION_ID = "wamid.QUESTION";
const IGNORED = { kind: "respond", status: 200, body: { ok: true } };

/** A `messages` notification carrying `messages`, as the Cloud API documents it. */
function notification(messages: unknown[]) {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: PHONE_ID },
          contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: CUSTOMER }],
          messages,
        },
      }],
    }],
  };
}

/** A tap on a reply button (`button_reply`) or a list row (`list_reply`) of the question. */
function tap(
  id: string,
  kind: "button_reply" | "list_reply" = "button_reply",
  wamid = "wamid.TAP",
) {
  return {
    context: { from: "15550783881", id: QUESTION_ID },
    from: CUSTOMER,
    id: wamid,
    timestamp: "1749416383",
    type: "interactive",
    interactive: { type: kind, [kind]: { id, title: "Approve once" } },
  };
}

function text(body: string, id = "wamid.TEXT") {
  return { from: CUSTOMER, id, timestamp: "1749416383", type: "text", text: { body } };
}

async function parse(payload: unknown): Promise<Ingress<WhatsappTarget>> {
  const body = JSON.stringify(payload);
  const request: RawRequest = {
    headers: new Headers({
      "content-type": "application/json",
      "x-hub-signature-256": await signWhatsappPayload(APP_SECRET, body),
    }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/whatsapp",
    nowSeconds: 1_700_000_000,
  };
  assertStrictEquals(await whatsappAdapter.verify(request, ENV), null);
  return whatsappAdapter.parse(request, ENV);
}

function choiceOf(ingress: Ingress<WhatsappTarget>): PlatformChoice<WhatsappTarget> {
  if (ingress.kind !== "choice") throw new Error(`expected a choice: ${JSON.stringify(ingress)}`);
  return ingress.choice;
}

Deno.test("whatsappAdapter.parse() turns a tap on baton's reply button into a choice, its clicker bound as a message's sender", async () => {
  const choice = choiceOf(await parse(notification([tap(ONCE)])));
  assertEquals(choice, {
    sessionKey: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
    deliveryKey: "wa:wamid.TAP",
    data: ONCE,
    context: {
      platform: "whatsapp",
      session_key: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
      chat_id: CUSTOMER,
      chat_name: "Sheena Nelson",
      thread_id: "",
      user_id: CUSTOMER,
      user_name: "Sheena Nelson",
      message_id: "wamid.TAP",
    },
    reply: {
      platform: "whatsapp",
      phone_number_id: PHONE_ID,
      to: CUSTOMER,
      message_id: "wamid.TAP",
    },
    sender: { platform: "whatsapp", user: CUSTOMER, name: "Sheena Nelson", direct: true },
  });
  // Exactly as a text from the same customer would be bound.
  const message = await parse(notification([text("hi", "wamid.TAP")]));
  if (message.kind !== "message") throw new Error("expected a message");
  // A tap is answered at once, never stored: only a text's key is remembered past the inbox's day.
  const { text: _, keyMemoryMs: ___, ...who } = message.message;
  const { data: __, ...clicker } = choice;
  assertEquals(clicker, who);
});

Deno.test("whatsappAdapter.parse() reads a list row's id (list_reply) like a button's", async () => {
  const choice = choiceOf(await parse(notification([tap(CHOICES[3].data, "list_reply")])));
  assertStrictEquals(choice.data, CHOICES[3].data);
});

Deno.test("whatsappAdapter.parse() acknowledges taps that are not baton's, and other interactive replies, with nothing to answer", async () => {
  assertEquals(await parse(notification([tap("other-flow:yes")])), IGNORED);
  assertEquals(await parse(notification([tap(`bt:${"x".repeat(80)}`)])), IGNORED);
  const flow = { ...tap(ONCE), interactive: { type: "nfm_reply", nfm_reply: { body: "Sent" } } };
  assertEquals(await parse(notification([flow])), IGNORED);
  const noId = { ...tap(ONCE), interactive: { type: "button_reply", button_reply: {} } };
  assertEquals(await parse(notification([noId])), IGNORED);
});

Deno.test("whatsappAdapter.parse() answers the taps of a notification batched with messages first, and keeps the messages", async () => {
  const ingress = await parse(
    notification([text("first", "wamid.A"), tap(ONCE, "button_reply", "wamid.B")]),
  );
  if (ingress.kind !== "messages") throw new Error(`expected messages: ${ingress.kind}`);
  assertEquals(ingress.messages.map((m) => m.text), ["first"]);
  assertEquals(ingress.choices?.map((c) => [c.deliveryKey, c.data]), [["wa:wamid.B", ONCE]]);
});

Deno.test("whatsappAdapter.parse() throws PayloadError for a tap whose body is not JSON", () => {
  const body = new TextEncoder().encode(JSON.stringify(notification([tap(ONCE)])).slice(0, -2));
  const request = { headers: new Headers(), body, url: "https://baton.test/", nowSeconds: 0 };
  assert(assertThrows(() => whatsappAdapter.parse(request, ENV)) instanceof PayloadError);
});

const TARGET: WhatsappTarget = {
  platform: "whatsapp",
  phone_number_id: PHONE_ID,
  to: CUSTOMER,
  message_id: "wamid.ASKED",
};

Deno.test("whatsappAdapter.send() shows four choices as a list message, three or fewer as reply buttons, none as text", async () => {
  await withFetch(() => Response.json({ messages: [{ id: "wamid.OUT" }] }), async (calls) => {
    await whatsappAdapter.send(TARGET, "Approve?", { index: 0, count: 1, choices: CHOICES }, ENV);
    await whatsappAdapter.send(
      TARGET,
      "Approve?",
      { index: 0, count: 1, choices: CHOICES.slice(0, 2) },
      ENV,
    );
    await whatsappAdapter.send(TARGET, "plain", { index: 1, count: 2 }, ENV);
    assertStrictEquals(calls[0].url, `http://graph.test/v21.0/${PHONE_ID}/messages`);
    assertEquals(calls[0].body, {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: CUSTOMER,
      type: "interactive",
      interactive: {
        type: "list",
        body: { text: "Approve?" },
        action: {
          button: "Choose",
          sections: [{
            title: "Choices",
            rows: CHOICES.map((c) => ({ id: c.data, title: c.label })),
          }],
        },
      },
      context: { message_id: "wamid.ASKED" },
    });
    assertEquals(calls[1].body.interactive, {
      type: "button",
      body: { text: "Approve?" },
      action: {
        buttons: CHOICES.slice(0, 2).map((c) => ({
          type: "reply",
          reply: { id: c.data, title: c.label },
        })),
      },
    });
    assertEquals(calls[2].body.type, "text");
    assertStrictEquals(calls[2].body.interactive, undefined);
  });
});

Deno.test("whatsappAdapter.send() keeps titles within WhatsApp's limits and a long question in a list", async () => {
  const long = [
    { label: "A label much longer than twenty", data: "bt:1" },
    { label: "B", data: "bt:2" },
  ];
  const question = "q".repeat(1500);
  await withFetch(() => Response.json({}), async (calls) => {
    await whatsappAdapter.send(TARGET, "Pick", { index: 0, count: 1, choices: long }, ENV);
    await whatsappAdapter.send(TARGET, question, { index: 0, count: 1, choices: long }, ENV);
    const [button] = calls[0].body.interactive.action.buttons;
    assertEquals(button.reply, { id: "bt:1", title: "A label much longer " });
    assertStrictEquals(calls[1].body.interactive.type, "list");
    assertStrictEquals(calls[1].body.interactive.body.text, question);
    const [row] = calls[1].body.interactive.action.sections[0].rows;
    assertEquals(row, { id: "bt:1", title: "A label much longer than" });
  });
});

Deno.test("whatsappAdapter.answerChoice() tells the chat only what a click that did nothing must say, and answers 200", async () => {
  const choice = choiceOf(await parse(notification([tap(ONCE)])));
  await withFetch(() => Response.json({}), async (calls) => {
    const answers: ClickAnswer[] = [
      { kind: "answered", tool: "session_info", choice: "once" },
      { kind: "answered", tool: "session_info", choice: "deny" },
      { kind: "not_allowed" },
      { kind: "not_pending" },
    ];
    for (const answer of answers) {
      assertEquals(await whatsappAdapter.answerChoice!(choice, answer, ENV), {
        status: 200,
        body: { ok: true },
      });
    }
    assertStrictEquals(calls.length, 1);
    assertEquals(calls[0].body, {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: CUSTOMER,
      type: "text",
      text: { body: approvalClickText({ kind: "not_pending" }), preview_url: false },
      context: { message_id: "wamid.TAP" },
    });
  });
  // A failed notice is logged only: the click has been judged.
  await withFetch(() => Promise.reject(new Error("down")), async () => {
    const answer = await whatsappAdapter.answerChoice!(choice, { kind: "not_pending" }, ENV);
    assertStrictEquals(answer.status, 200);
  });
});

Deno.test("whatsappAdapter.typing() shows the indicator on the customer's message, renewed every ~20 s (it lasts 25)", async () => {
  const target = { ...TARGET, to: "16505550001", message_id: "wamid.TYPING" };
  await withFetch(() => Response.json({ success: true }), async (calls) => {
    assertStrictEquals(await whatsappAdapter.typing!(target, ENV), true);
    assertEquals([calls[0].url, calls[0].body], [
      `http://graph.test/v21.0/${PHONE_ID}/messages`,
      {
        messaging_product: "whatsapp",
        status: "read",
        message_id: "wamid.TYPING",
        typing_indicator: { type: "text" },
      },
    ]);
  });
  // Not every 4 s as Telegram's: the live reply renews it at the adapter's own interval.
  const every = whatsappAdapter.typingEveryMs ?? 0;
  assert(every > 4_000 && every < 25_000, `${every} ms`);
});

Deno.test("whatsappAdapter.typing() is false, and never throws, without a message id, on a 429 or a failure", async () => {
  const { message_id: _, ...older } = { ...TARGET, to: "16505550002" };
  await withFetch((_, i) => {
    if (i === 0) {
      return Response.json({ error: { code: 130429, message: "Rate limit hit" } }, {
        status: 429,
      });
    }
    if (i === 1) return Promise.reject(new Error("connection reset"));
    return Response.json({ error: { code: 100, message: "Invalid parameter" } }, { status: 400 });
  }, async (calls) => {
    assertStrictEquals(await whatsappAdapter.typing!(older, ENV), false);
    assertStrictEquals(calls.length, 0);
    const target = { ...TARGET, to: "16505550003" };
    assertStrictEquals(await whatsappAdapter.typing!(target, ENV), false);
    assertStrictEquals(await whatsappAdapter.typing!(target, ENV), false);
    assertStrictEquals(await whatsappAdapter.typing!(target, ENV), false);
    assertStrictEquals(calls.length, 3, "a failure is not remembered as shown");
  });
});

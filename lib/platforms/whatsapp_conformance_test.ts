// Conformance: the WhatsApp adapter against Meta's published Cloud API webhook samples, an independent X-Hub-Signature-256 (node:crypto), and the documented messages fields; Deno (tests only).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { createHmac } from "node:crypto";
import {
  type Choice,
  PART_ROOM,
  type PlatformEnv,
  type RawRequest,
  RESEND_NOTE,
  splitMessage,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { signWhatsappPayload, whatsappAdapter, type WhatsappTarget } from "./whatsapp.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const APP_SECRET = "0123456789abcdef0123456789abcdef";
const VERIFY_TOKEN = "meatyhamhock";
const PHONE_ID = "106540352242922";
const CUSTOMER = "16505551234";
const ENV: PlatformEnv = {
  WHATSAPP_APP_SECRET: APP_SECRET,
  WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
  WHATSAPP_ACCESS_TOKEN: "EAAJB-access-token",
  WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
  WHATSAPP_API_ROOT: "https://graph.test/v21.0",
};
const WAMID = "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=";

// ── Meta's published webhook samples (WhatsApp Cloud API "messages" webhook reference) ─────────
// Written out as the reference pages show them (values of Meta's own examples), one per message
// type the issue names; only the envelope is shared.

function notification(value: Record<string, unknown>) {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: PHONE_ID },
          ...value,
        },
        field: "messages",
      }],
    }],
  };
}

const CONTACTS = [{ profile: { name: "Sheena Nelson" }, wa_id: CUSTOMER }];

const TEXT = notification({
  contacts: CONTACTS,
  messages: [{
    from: CUSTOMER,
    id: WAMID,
    timestamp: "1749416383",
    type: "text",
    text: { body: "Does it come in another color?" },
  }],
});

function buttonReply(id: string) {
  return notification({
    contacts: CONTACTS,
    messages: [{
      context: {
        from: "15550783881",
        id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NjVCMTg4QzQ4MjJCNzM2NkUA",
      },
      from: CUSTOMER,
      id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFFNEI0NjhGQTJFQkMyOEVGQwA=",
      timestamp: "1750032308",
      type: "interactive",
      interactive: { type: "button_reply", button_reply: { id, title: "Approve once" } },
    }],
  });
}

function listReply(id: string) {
  return notification({
    contacts: CONTACTS,
    messages: [{
      context: {
        from: "15550783881",
        id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJEQjNGOTZGMTdCMTMyMjQwRjAA",
      },
      from: CUSTOMER,
      id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUZFMzU3RjZBRjhGNTUxNTlGRQA=",
      timestamp: "1750032500",
      type: "interactive",
      interactive: {
        type: "list_reply",
        list_reply: { id, title: "This session", description: "Approve for this session" },
      },
    }],
  });
}

const IMAGE = notification({
  contacts: CONTACTS,
  messages: [{
    from: CUSTOMER,
    id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUY3RjE0NjhEQzg0RTM3NUE0MAA=",
    timestamp: "1744344496",
    type: "image",
    image: {
      caption: "Black jacket",
      mime_type: "image/jpeg",
      sha256: "3yFERi4oSIvKvlfNOT7gTWL2Vn+J1cVSQj7IxmRVYVs=",
      id: "1003383421387256",
      url: "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1003383421387256",
    },
  }],
});

const VOICE = notification({
  contacts: CONTACTS,
  messages: [{
    from: CUSTOMER,
    id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTg3RTM3RjE3NkNFQkE5NjNDNQA=",
    timestamp: "1744344496",
    type: "audio",
    audio: {
      mime_type: "audio/ogg; codecs=opus",
      sha256: "2xGvBbZ3Lq6pZ2X5xG7XzWq3bL9uPFlHzkOdyo4kKQs=",
      id: "1003383421387257",
      url: "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1003383421387257",
      voice: true,
    },
  }],
});

const STATUSES = notification({
  statuses: [{
    id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI4MjZGRDA0OUE2OTQ3RkEyMzcA",
    status: "delivered",
    timestamp: "1750263773",
    recipient_id: CUSTOMER,
    conversation: {
      id: "6ceb9d929c1a1a5ce95c1b5bd6e3f0f8",
      origin: { type: "service" },
    },
    pricing: {
      billable: false,
      pricing_model: "PMP",
      category: "service",
      type: "free_customer_service",
    },
  }],
});

const FAILED = notification({
  statuses: [{
    id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJBOUY3RkE2QkQ2RDE5NUJCNEYA",
    status: "failed",
    timestamp: "1750263773",
    recipient_id: CUSTOMER,
    errors: [{
      code: 131047,
      title: "Re-engagement message",
      message: "Re-engagement message",
      error_data: {
        details:
          "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
      },
      href: "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
    }],
  }],
});

const UNSUPPORTED = notification({
  contacts: CONTACTS,
  messages: [{
    from: CUSTOMER,
    id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTk3NzQ1OTI2MzVCQkZGODZEMwA=",
    timestamp: "1750090702",
    type: "unsupported",
    errors: [{
      code: 131051,
      title: "Message type unknown",
      message: "Message type unknown",
      error_data: { details: "Message type is currently not supported." },
    }],
  }],
});

const VALUE_ERRORS = notification({
  errors: [{
    code: 130501,
    title: "Receiver is incapable of receiving this message",
    message: "Receiver is incapable of receiving this message",
    error_data: { details: "Message failed to send" },
  }],
});

/** `X-Hub-Signature-256` as Meta computes it, independently of baton: node:crypto's HMAC. */
function metaSignature(secret: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body, "utf8").digest("hex");
}

function raw(body: string, signature: string | null): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/whatsapp",
    // A second after the text sample's timestamp, the oldest that starts anything: no sample is
    // refused as a replay (the later ones are stamped ahead of this clock, which is no replay).
    nowSeconds: 1_749_416_384,
  };
}

function delivery(payload: unknown): RawRequest {
  const body = JSON.stringify(payload);
  return raw(body, metaSignature(APP_SECRET, body));
}

Deno.test("signWhatsappPayload() equals node:crypto's HMAC, and whatsappAdapter.verify() accepts Meta's signature on every sample", async () => {
  for (const sample of [TEXT, buttonReply("x"), IMAGE, VOICE, STATUSES, FAILED, UNSUPPORTED]) {
    const body = JSON.stringify(sample);
    assertStrictEquals(
      await signWhatsappPayload(APP_SECRET, body),
      metaSignature(APP_SECRET, body),
    );
    assertStrictEquals(await whatsappAdapter.verify(delivery(sample), ENV), null);
  }
  // Non-ASCII bytes (a customer's accents, an emoji) are hashed as sent: UTF-8.
  const accented = JSON.stringify(notification({ messages: [{ text: { body: "¿Qué tal? 😀" } }] }));
  assertStrictEquals(
    await whatsappAdapter.verify(raw(accented, metaSignature(APP_SECRET, accented)), ENV),
    null,
  );
});

Deno.test("whatsappAdapter.verify() refuses another secret, a changed byte and a signature without its sha256= prefix", async () => {
  const body = JSON.stringify(TEXT);
  const good = metaSignature(APP_SECRET, body);
  const cases: [string, string | null][] = [
    [body, metaSignature("another-app-secret", body)],
    [body.replace("another color", "another colour"), good],
    [body, good.slice("sha256=".length)],
    [body, null],
  ];
  for (const [b, signature] of cases) {
    const refusal = await whatsappAdapter.verify(raw(b, signature), ENV);
    assert(typeof refusal === "string", `accepted ${signature}`);
  }
});

Deno.test("whatsappAdapter.handshake() answers Meta's GET verification request with the challenge, else 403", async () => {
  // As Meta sends it: `hub.mode=subscribe&hub.challenge=<int>&hub.verify_token=<token>`.
  const query = new URLSearchParams(
    `hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${VERIFY_TOKEN}`,
  );
  const answer = await whatsappAdapter.handshake!(query, ENV);
  assertStrictEquals(answer.status, 200);
  assertStrictEquals(answer.body, "1158201444");
  assert(answer.contentType?.startsWith("text/plain"));
  const wrong = new URLSearchParams(
    "hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=x",
  );
  assertStrictEquals((await whatsappAdapter.handshake!(wrong, ENV)).status, 403);
});

Deno.test("whatsappAdapter.parse() turns Meta's text sample into a message from the customer", () => {
  const ingress = whatsappAdapter.parse(delivery(TEXT), ENV);
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message, {
    sessionKey: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
    deliveryKey: `wa:${WAMID}`,
    // Meta's seven days of retries and the hour a clock may be ahead.
    keyMemoryMs: (7 * 24 + 1) * 60 * 60 * 1000,
    text: "Does it come in another color?",
    context: {
      platform: "whatsapp",
      session_key: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
      chat_id: CUSTOMER,
      chat_name: "Sheena Nelson",
      thread_id: "",
      user_id: CUSTOMER,
      user_name: "Sheena Nelson",
      message_id: WAMID,
    },
    reply: { platform: "whatsapp", phone_number_id: PHONE_ID, to: CUSTOMER, message_id: WAMID },
    sender: { platform: "whatsapp", user: CUSTOMER, name: "Sheena Nelson", direct: true },
  });
});

Deno.test("whatsappAdapter.parse() reads button_reply and list_reply samples carrying baton's choice as clicks, others' as nothing", () => {
  const [once, session] = approvalButtons(2, "call_7");
  const button = whatsappAdapter.parse(delivery(buttonReply(once.data)), ENV);
  assert(button.kind === "choice", JSON.stringify(button));
  assertStrictEquals(button.choice.data, once.data);
  assertStrictEquals(button.choice.sender.user, CUSTOMER);
  const list = whatsappAdapter.parse(delivery(listReply(session.data)), ENV);
  assert(list.kind === "choice", JSON.stringify(list));
  assertStrictEquals(list.choice.data, session.data);
  // Another flow's ids (Meta's sample ids): acknowledged only.
  assertEquals(whatsappAdapter.parse(delivery(buttonReply("unique-button-identifier-here")), ENV), {
    kind: "respond",
    status: 200,
    body: { ok: true },
  });
});

Deno.test("whatsappAdapter.parse() acknowledges image, voice, status, failed-status, unsupported and error samples without a turn", () => {
  for (const sample of [IMAGE, VOICE, STATUSES, FAILED, UNSUPPORTED, VALUE_ERRORS]) {
    const ingress = whatsappAdapter.parse(delivery(sample), ENV);
    assertEquals(ingress, { kind: "respond", status: 200, body: { ok: true } });
  }
  // Another number of the same business account: not this bot's.
  const other = whatsappAdapter.parse(delivery(TEXT), { ...ENV, WHATSAPP_PHONE_NUMBER_ID: "1" });
  assertStrictEquals(other.kind, "respond");
});

// ── out: the Cloud API's POST /{phone-number-id}/messages bodies, field by field ───────────────
// No official TypeScript package: these tables are the fields the Cloud API reference documents
// ("Messages" reference; "Interactive reply buttons", "Interactive list", "Typing indicators").

interface MessagesBody {
  messaging_product: "whatsapp";
  recipient_type?: "individual" | "group";
  to: string;
  type?: string;
  context?: { message_id: string };
  text?: { body: string; preview_url?: boolean };
  interactive?: unknown;
  biz_opaque_callback_data?: string;
  // Marking read / typing (`status: "read"` with `message_id`).
  status?: "read";
  message_id?: string;
  typing_indicator?: { type: "text" };
}
const MESSAGES: KeyTable<MessagesBody> = {
  messaging_product: true,
  recipient_type: true,
  to: true,
  type: true,
  context: true,
  text: true,
  interactive: true,
  biz_opaque_callback_data: true,
  status: true,
  message_id: true,
  typing_indicator: true,
};
const TEXT_OBJECT: KeyTable<{ body: string; preview_url?: boolean }> = {
  body: true,
  preview_url: true,
};
interface Interactive {
  type: "button" | "list";
  header?: unknown;
  body: { text: string };
  footer?: { text: string };
  action: unknown;
}
const INTERACTIVE: KeyTable<Interactive> = {
  type: true,
  header: true,
  body: true,
  footer: true,
  action: true,
};
const BUTTONS_ACTION: KeyTable<{ buttons: unknown[] }> = { buttons: true };
const LIST_ACTION: KeyTable<{ button: string; sections: unknown[] }> = {
  button: true,
  sections: true,
};
const SECTION: KeyTable<{ title?: string; rows: unknown[] }> = { title: true, rows: true };
const ROW: KeyTable<{ id: string; title: string; description?: string }> = {
  id: true,
  title: true,
  description: true,
};
const BUTTON: KeyTable<{ type: "reply"; reply: { id: string; title: string } }> = {
  type: true,
  reply: true,
};
const REPLY: KeyTable<{ id: string; title: string }> = { id: true, title: true };
const chars = (s: unknown) => [...String(s)].length;

/** Checks one interactive object against the documented fields and limits. */
function assertInteractive(interactive: Record<string, unknown>): void {
  assertDeclaredKeys<Interactive>("interactive", interactive, INTERACTIVE, [
    "type",
    "body",
    "action",
  ]);
  const body = interactive.body as { text: string };
  const action = interactive.action as Record<string, unknown>;
  if (interactive.type === "button") {
    // Reply buttons: body ≤ 1,024, 1–3 buttons, ids ≤ 256, titles ≤ 20 and unique.
    assert(chars(body.text) <= 1024);
    assertDeclaredKeys<{ buttons: unknown[] }>("action", action, BUTTONS_ACTION, ["buttons"]);
    const buttons = action.buttons as { type: string; reply: { id: string; title: string } }[];
    assert(buttons.length >= 1 && buttons.length <= 3);
    for (const b of buttons) {
      assertDeclaredKeys<{ type: "reply"; reply: { id: string; title: string } }>(
        "button",
        b,
        BUTTON,
        ["type", "reply"],
      );
      assertStrictEquals(b.type, "reply");
      assertDeclaredKeys<{ id: string; title: string }>("reply", b.reply, REPLY, ["id", "title"]);
      assert(chars(b.reply.id) <= 256 && chars(b.reply.title) <= 20);
    }
    assertStrictEquals(new Set(buttons.map((b) => b.reply.title)).size, buttons.length);
    return;
  }
  assertStrictEquals(interactive.type, "list");
  // List: body ≤ 4,096, button ≤ 20, ≤ 10 sections and ≤ 10 rows in all, row id ≤ 200, title ≤ 24.
  assert(chars(body.text) <= 4096);
  assertDeclaredKeys<{ button: string; sections: unknown[] }>("action", action, LIST_ACTION, [
    "button",
    "sections",
  ]);
  assert(chars(action.button) >= 1 && chars(action.button) <= 20);
  const sections = action.sections as { title?: string; rows: Record<string, unknown>[] }[];
  assert(sections.length >= 1 && sections.length <= 10);
  let rows = 0;
  for (const section of sections) {
    assertDeclaredKeys<{ title?: string; rows: unknown[] }>("section", section, SECTION, ["rows"]);
    assert(chars(section.title ?? "") <= 24);
    for (const row of section.rows) {
      assertDeclaredKeys<{ id: string; title: string }>("row", row, ROW, ["id", "title"]);
      assert(chars(row.id) <= 200 && chars(row.title) <= 24);
      rows++;
    }
  }
  assert(rows >= 1 && rows <= 10);
}

/** Checks one captured request against the documented endpoint, fields and limits. */
function assertMessagesCall(call: FetchCall): void {
  assertStrictEquals(call.method, "POST");
  assertStrictEquals(call.url, `${ENV.WHATSAPP_API_ROOT}/${PHONE_ID}/messages`);
  assertStrictEquals(call.headers.get("content-type"), "application/json");
  assertDeclaredKeys<MessagesBody>("messages", call.body, MESSAGES, ["messaging_product"]);
  assertStrictEquals(call.body.messaging_product, "whatsapp");
  if (call.body.status === "read") {
    assertDeclaredKeys<MessagesBody>("read", call.body, MESSAGES, ["message_id"]);
    return;
  }
  assertStrictEquals(call.body.to, CUSTOMER);
  assertStrictEquals(call.body.recipient_type, "individual");
  if (call.body.context) assertEquals(Object.keys(call.body.context), ["message_id"]);
  if (call.body.type === "text") {
    assertDeclaredKeys<{ body: string }>("text", call.body.text, TEXT_OBJECT, ["body"]);
    assert(chars(call.body.text.body) <= 4096, `text of ${chars(call.body.text.body)}`);
  } else {
    assertStrictEquals(call.body.type, "interactive");
    assertInteractive(call.body.interactive);
  }
}

const TARGET: WhatsappTarget = {
  platform: "whatsapp",
  phone_number_id: PHONE_ID,
  to: CUSTOMER,
  message_id: WAMID,
};
const sent = () => Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.X" }] });

Deno.test("whatsappAdapter.send() posts documented text bodies: the first part quotes the customer's message, every part ≤ 4,096", async () => {
  const reply = "lorem ipsum ".repeat(1200);
  const parts = splitMessage(reply, whatsappAdapter.maxMessageChars - PART_ROOM);
  assert(parts.length >= 3);
  await withFetch(sent, async (calls) => {
    for (const [index, part] of parts.entries()) {
      await whatsappAdapter.send(TARGET, RESEND_NOTE + part, { index, count: parts.length }, ENV);
    }
    for (const call of calls) assertMessagesCall(call);
    assertEquals(calls[0].body.context, { message_id: WAMID });
    assertStrictEquals(calls[1].body.context, undefined);
  });
});

Deno.test("whatsappAdapter.send() asks with documented reply buttons (≤ 3 choices) or an interactive list (an approval's four)", async () => {
  const approval = approvalButtons(4, "call_x");
  const three: Choice[] = approval.slice(0, 3);
  await withFetch(sent, async (calls) => {
    await whatsappAdapter.send(TARGET, "May I run `deploy`?", {
      index: 0,
      count: 1,
      choices: approval,
    }, ENV);
    await whatsappAdapter.send(TARGET, "Pick one", { index: 0, count: 1, choices: three }, ENV);
    await whatsappAdapter.send(
      TARGET,
      "x".repeat(2000),
      { index: 0, count: 1, choices: three },
      ENV,
    );
    for (const call of calls) assertMessagesCall(call);
    assertEquals(calls.map((c) => c.body.interactive.type), ["list", "button", "list"]);
  });
});

Deno.test("whatsappAdapter.typing() and answerChoice() post documented read/typing and text bodies", async () => {
  await withFetch(() => Response.json({ success: true }), async (calls) => {
    assert(await whatsappAdapter.typing!(TARGET, ENV));
    assertEquals(calls[0].body, {
      messaging_product: "whatsapp",
      status: "read",
      message_id: WAMID,
      typing_indicator: { type: "text" },
    });
    const choice = {
      sessionKey: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
      deliveryKey: "wa:x",
      data: approvalButtons(1, "c")[0].data,
      context: {
        platform: "whatsapp",
        chat_id: CUSTOMER,
        chat_name: "",
        thread_id: "",
        user_id: CUSTOMER,
        user_name: "",
        session_key: `whatsapp:${PHONE_ID}:${CUSTOMER}`,
        message_id: "x",
      },
      reply: TARGET,
      sender: { platform: "whatsapp", user: CUSTOMER, name: "", direct: true },
    };
    await whatsappAdapter.answerChoice!(choice, { kind: "not_pending" }, ENV);
    assertStrictEquals(calls.length, 2);
    for (const call of calls) assertMessagesCall(call);
  });
});

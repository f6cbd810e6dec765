// Unit tests for lib/platforms/whatsapp.ts: handshake, signature, notification parsing and Graph sends over a stubbed fetch; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { PayloadError, type RawRequest } from "../chat/mod.ts";
import { signWhatsappPayload, whatsappAdapter, type WhatsappTarget } from "./whatsapp.ts";
import { withFetch } from "./_fetch_stub.ts";
import { setLogSink } from "../runtime/mod.ts";
import { DEDUP_MS } from "../session/inbox.ts";
import { approvalButtons } from "../session/approval_buttons.ts";

const APP_SECRET = "wa-app-secret-0123456789abcdef";
const VERIFY = "wa-verify-token_42";
const ACCESS = "EAAGwa-access-token-value";
const PHONE_ID = "106540352242922";
const ENV = {
  WHATSAPP_APP_SECRET: APP_SECRET,
  WHATSAPP_VERIFY_TOKEN: VERIFY,
  WHATSAPP_ACCESS_TOKEN: ACCESS,
  WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
  WHATSAPP_API_ROOT: "http://graph.test/v21.0/",
};
const PART = { index: 0, count: 1 };
const TARGET: WhatsappTarget = {
  platform: "whatsapp",
  phone_number_id: PHONE_ID,
  to: "16315551181",
  message_id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
};

/** A `messages` notification as the Cloud API documents it, with `messages` and/or `statuses`. */
export function waNotification(
  value: { messages?: unknown[]; statuses?: unknown[]; phoneNumberId?: string },
): Record<string, unknown> {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: "15550783881",
            phone_number_id: value.phoneNumberId ?? PHONE_ID,
          },
          contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }],
          ...(value.messages ? { messages: value.messages } : {}),
          ...(value.statuses ? { statuses: value.statuses } : {}),
        },
      }],
    }],
  };
}

/** The documented sample message's time (Unix seconds, as Meta sends it: a string), and "now" in these tests: a second later. */
const SAMPLE_S = 1_749_416_383;
const NOW_S = SAMPLE_S + 1;

/** A text message from the documented sample customer, sent at `timestamp` (seconds). */
export function waText(
  body: string,
  id = "wamid.ID1",
  timestamp = SAMPLE_S,
): Record<string, unknown> {
  return { from: "16505551234", id, timestamp: String(timestamp), type: "text", text: { body } };
}

/** The lines `fn` logs. */
async function captureLog(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const restore = setLogSink((_level, line) => lines.push(line));
  try {
    await fn();
  } finally {
    restore();
  }
  return lines;
}

function raw(body: string, headers: Record<string, string> = {}): RawRequest {
  return {
    headers: new Headers({ "content-type": "application/json", ...headers }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/whatsapp",
    nowSeconds: NOW_S,
  };
}

async function signed(payload: unknown): Promise<RawRequest> {
  const body = JSON.stringify(payload);
  return raw(body, { "x-hub-signature-256": await signWhatsappPayload(APP_SECRET, body) });
}

Deno.test("whatsappAdapter.verify() accepts Meta's X-Hub-Signature-256 over the exact body", async () => {
  assertStrictEquals(await whatsappAdapter.verify(await signed({ a: 1 }), ENV), null);
});

Deno.test("whatsappAdapter.verify() refuses a missing, malformed, wrong-key or other-body signature without naming the secret", async () => {
  const body = JSON.stringify(waNotification({ messages: [waText("hi")] }));
  const good = await signWhatsappPayload(APP_SECRET, body);
  const cases: Record<string, string>[] = [
    {},
    { "x-hub-signature-256": "" },
    { "x-hub-signature-256": good.slice("sha256=".length) },
    { "x-hub-signature-256": "sha1=" + good.slice(7, 47) },
    { "x-hub-signature-256": good.slice(0, -2) },
    { "x-hub-signature-256": await signWhatsappPayload("another-secret", body) },
    { "x-hub-signature-256": await signWhatsappPayload(APP_SECRET, body + " ") },
  ];
  for (const headers of cases) {
    const refusal = await whatsappAdapter.verify(raw(body, headers), ENV);
    assert(typeof refusal === "string", JSON.stringify(headers));
    assert(!refusal.includes(APP_SECRET));
  }
});

Deno.test("whatsappAdapter.handshake() echoes hub.challenge for subscribe with the verify token, as text", async () => {
  const query = new URLSearchParams({
    "hub.mode": "subscribe",
    "hub.verify_token": VERIFY,
    "hub.challenge": "1158201444",
  });
  assertEquals(await whatsappAdapter.handshake!(query, ENV), {
    status: 200,
    body: "1158201444",
    contentType: "text/plain; charset=utf-8",
  });
});

Deno.test("whatsappAdapter.handshake() answers 403 to a wrong token, mode or challenge, never echoing the token", async () => {
  const cases: Record<string, string>[] = [
    { "hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "1" },
    { "hub.mode": "unsubscribe", "hub.verify_token": VERIFY, "hub.challenge": "1" },
    { "hub.verify_token": VERIFY, "hub.challenge": "1" },
    { "hub.mode": "subscribe", "hub.verify_token": VERIFY },
    { "hub.mode": "subscribe", "hub.verify_token": VERIFY, "hub.challenge": "<script>" },
  ];
  for (const params of cases) {
    const answer = await whatsappAdapter.handshake!(new URLSearchParams(params), ENV);
    assertStrictEquals(answer.status, 403, JSON.stringify(params));
    assert(!JSON.stringify(answer).includes(VERIFY));
  }
});

Deno.test("whatsappAdapter.parse() turns a text message into one turn per customer chat", async () => {
  const ingress = whatsappAdapter.parse(
    await signed(waNotification({ messages: [waText("hello bot", "wamid.A")] })),
    ENV,
  );
  assertEquals(ingress, {
    kind: "message",
    message: {
      sessionKey: `whatsapp:${PHONE_ID}:16505551234`,
      deliveryKey: "wa:wamid.A",
      // Meta's seven days of retries and the hour a clock may be ahead.
      keyMemoryMs: (7 * 24 + 1) * 60 * 60 * 1000,
      text: "hello bot",
      context: {
        platform: "whatsapp",
        session_key: `whatsapp:${PHONE_ID}:16505551234`,
        chat_id: "16505551234",
        chat_name: "Sheena Nelson",
        thread_id: "",
        user_id: "16505551234",
        user_name: "Sheena Nelson",
        message_id: "wamid.A",
      },
      reply: {
        platform: "whatsapp",
        phone_number_id: PHONE_ID,
        to: "16505551234",
        message_id: "wamid.A",
      },
      sender: { platform: "whatsapp", user: "16505551234", name: "Sheena Nelson", direct: true },
    },
  });
});

Deno.test("whatsappAdapter.parse() keeps several messages of one notification in order", async () => {
  const ingress = whatsappAdapter.parse(
    await signed(
      waNotification({ messages: [waText("one", "wamid.1"), waText("two", "wamid.2")] }),
    ),
    ENV,
  );
  assert(ingress.kind === "messages");
  assertEquals(ingress.messages.map((m) => [m.text, m.deliveryKey]), [
    ["one", "wa:wamid.1"],
    ["two", "wa:wamid.2"],
  ]);
});

Deno.test("whatsappAdapter.parse() acknowledges statuses, reactions, other numbers and other objects with no turn", async () => {
  const ignored = [
    waNotification({
      statuses: [{ id: "wamid.X", status: "delivered", timestamp: "1", recipient_id: "1" }],
    }),
    waNotification({
      statuses: [{
        id: "wamid.Y",
        status: "failed",
        errors: [{ code: 131047, title: "Re-engagement message" }],
      }],
    }),
    // Media are turns (whatsapp_media.ts); a reaction, or a medium with no usable id, is none.
    waNotification({
      messages: [{
        from: "16505551234",
        id: "wamid.R",
        type: "reaction",
        reaction: { message_id: "wamid.OUT", emoji: "+1" },
      }],
    }),
    waNotification({
      messages: [{ from: "16505551234", id: "wamid.I", type: "image", image: {} }],
    }),
    waNotification({ messages: [waText("")] }),
    waNotification({ messages: [waText("for another number")], phoneNumberId: "999" }),
    { ...waNotification({ messages: [waText("page")] }), object: "page" },
    { object: "whatsapp_business_account", entry: [{ id: "1", changes: [] }] },
    { some: "json" },
  ];
  for (const payload of ignored) {
    const ingress = whatsappAdapter.parse(await signed(payload), ENV);
    assertStrictEquals(ingress.kind, "respond", JSON.stringify(payload));
  }
});

Deno.test("whatsappAdapter.parse() starts a turn for an image: its caption the text, its media id announced (nothing fetched)", async () => {
  const ingress = whatsappAdapter.parse(
    await signed(waNotification({
      messages: [{
        from: "16505551234",
        id: "wamid.IMG",
        timestamp: String(NOW_S),
        type: "image",
        image: { id: "1234", mime_type: "image/jpeg", sha256: "00", caption: "what is this?" },
      }],
    })),
    ENV,
  );
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertStrictEquals(ingress.message.text, "what is this?");
  assertEquals(ingress.message.media, [
    { platform: "whatsapp", file: "1234", kind: "photo", type: "image/jpeg" },
  ]);
});

Deno.test("whatsappAdapter.parse() refuses a message older than Meta's 7 days of retries: acknowledged, logged, no turn", async () => {
  // Meta signs the body only, with no delivery time: a captured notification verifies for ever.
  // Its messages' own signed timestamps age it: past Meta's retries (7 days) it can only be a
  // replay. Inside them a late retry after an outage runs once: its message id is remembered as
  // long (keyMemoryMs), past the inbox's day.
  const day = DEDUP_MS / 1000;
  const week = 7 * day;
  const at = (ageS: number, id = `wamid.AGED${ageS}`) => waText(`aged ${ageS}`, id, NOW_S - ageS);
  const logged = await captureLog(async () => {
    for (const ageS of [week + 60, 8 * day, 365 * day]) {
      const ingress = whatsappAdapter.parse(
        await signed(waNotification({ messages: [at(ageS)] })),
        ENV,
      );
      assertStrictEquals(ingress.kind, "respond", `${ageS} s old`);
    }
  });
  assertStrictEquals(logged.filter((l) => l.includes("older than")).length, 3, logged.join("\n"));
  // A tap on baton's own buttons ages the same way.
  const tap = (ageS: number) => ({
    from: "16505551234",
    id: "wamid.OLDTAP",
    timestamp: String(NOW_S - ageS),
    type: "interactive",
    interactive: {
      type: "button_reply",
      button_reply: { id: approvalButtons(7, "call_old")[0].data, title: "Approve once" },
    },
  });
  const oldTap = whatsappAdapter.parse(
    await signed(waNotification({ messages: [tap(8 * day)] })),
    ENV,
  );
  assertStrictEquals(oldTap.kind, "respond");
  const newTap = whatsappAdapter.parse(await signed(waNotification({ messages: [tap(0)] })), ENV);
  assertStrictEquals(newTap.kind, "choice");
  // Fresh, hours or days late (a retry after an outage), or stamped ahead of this clock: it runs.
  for (const ageS of [0, 3600, day + 3600, 6 * day, week - 60, -60]) {
    const ingress = whatsappAdapter.parse(
      await signed(waNotification({ messages: [at(ageS)] })),
      ENV,
    );
    assert(ingress.kind === "message", `${ageS} s old`);
    // Its id is remembered for as long as the retries, and for the hour the horizon allows a
    // platform clock ahead of baton's.
    assert((ingress.message.keyMemoryMs ?? 0) >= (week + 3600) * 1000);
  }
  // In one notification, only the old message is dropped.
  const mixed = whatsappAdapter.parse(
    await signed(waNotification({ messages: [at(8 * day), at(1)] })),
    ENV,
  );
  assert(mixed.kind === "message");
  assertStrictEquals(mixed.message.text, "aged 1");
});

Deno.test("whatsappAdapter.parse() throws PayloadError for a body that is not JSON", () => {
  assert(assertThrows(() => whatsappAdapter.parse(raw("{nope"), ENV)) instanceof PayloadError);
});

Deno.test("whatsappAdapter.send() posts a text message to /{phone-number-id}/messages, quoting only in the first part", async () => {
  await withFetch(
    () => Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.R" }] }),
    async (calls) => {
      assertEquals(await whatsappAdapter.send(TARGET, "part one", PART, ENV), { ok: true });
      assertEquals(
        await whatsappAdapter.send(TARGET, "part two", { index: 1, count: 2 }, ENV),
        { ok: true },
      );
      assertStrictEquals(calls[0].url, `http://graph.test/v21.0/${PHONE_ID}/messages`);
      assertStrictEquals(calls[0].headers.get("authorization"), `Bearer ${ACCESS}`);
      assertEquals(calls[0].body, {
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: "16315551181",
        type: "text",
        text: { body: "part one", preview_url: false },
        context: { message_id: TARGET.message_id },
      });
      assertStrictEquals(calls[1].body.context, undefined);
    },
  );
});

Deno.test("whatsappAdapter.send() defaults to https://graph.facebook.com/v21.0", async () => {
  await withFetch(() => Response.json({}), async (calls) => {
    const { WHATSAPP_API_ROOT: _, ...env } = ENV;
    await whatsappAdapter.send(TARGET, "x", PART, env);
    assertStrictEquals(calls[0].url, `https://graph.facebook.com/v21.0/${PHONE_ID}/messages`);
  });
});

Deno.test("whatsappAdapter.send() reports a reply outside the 24-hour window as final, never retried", async () => {
  const error = {
    error: {
      message: "(#131047) Re-engagement message",
      type: "OAuthException",
      code: 131047,
      error_data: { details: "Message failed to send because more than 24 hours have passed" },
      fbtrace_id: "Az8or2yhqkZfEZ-_4Qn_Bam",
    },
  };
  await withFetch(() => Response.json(error, { status: 400 }), async () => {
    const result = await whatsappAdapter.send(TARGET, "late", PART, ENV);
    assert(!result.ok);
    assertStrictEquals(result.retryable, false);
    assertStrictEquals(result.uncertain, undefined);
    assert(result.message.includes("24 hours"), result.message);
    assert(result.message.includes("131047"), result.message);
  });
});

Deno.test("whatsappAdapter.send() makes throughput and pair-rate limits retryable with a wait", async () => {
  const limited = (code: number, status = 400) => () =>
    Response.json({ error: { message: "limit", code } }, { status });
  await withFetch(limited(130429), async () => {
    const result = await whatsappAdapter.send(TARGET, "x", PART, ENV);
    assert(!result.ok && result.retryable && result.retryAfterMs === 2000, JSON.stringify(result));
  });
  await withFetch(limited(131056), async () => {
    const result = await whatsappAdapter.send(TARGET, "x", PART, ENV);
    assert(!result.ok && result.retryable && result.retryAfterMs === 6000, JSON.stringify(result));
  });
  await withFetch(
    () => Response.json({}, { status: 429, headers: { "retry-after": "3" } }),
    async () => {
      const result = await whatsappAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && result.retryable && result.retryAfterMs === 3000);
    },
  );
});

Deno.test("whatsappAdapter.send() never shows the access token in a failure", async () => {
  await withFetch(
    () => Response.json({ error: { message: `bad token ${ACCESS}`, code: 190 } }, { status: 401 }),
    async () => {
      const result = await whatsappAdapter.send(TARGET, "x", PART, ENV);
      assert(
        !result.ok && !result.retryable && !result.message.includes(ACCESS),
        JSON.stringify(result),
      );
    },
  );
  await withFetch(() => {
    throw new TypeError(`connect failed http://graph.test/?access_token=${ACCESS}`);
  }, async () => {
    const result = await whatsappAdapter.send(TARGET, "x", PART, ENV);
    assert(!result.ok && result.uncertain === true && !result.message.includes(ACCESS));
  });
});

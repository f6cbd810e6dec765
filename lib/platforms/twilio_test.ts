// Unit tests for lib/platforms/twilio.ts: X-Twilio-Signature over URL and sorted params, form parsing, TwiML acks and Messages API sends over a stubbed fetch; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { RawRequest } from "../chat/mod.ts";
import { publicUrl } from "./_kit.ts";
import {
  EMPTY_TWIML,
  signTwilioRequest,
  twilioAdapter,
  twilioSignedContent,
  type TwilioTarget,
} from "./twilio.ts";
import { withFetch } from "./_fetch_stub.ts";

const SID = "AC" + "1234567890abcdef".repeat(2);
const TOKEN = "twilio-auth-token-0123456789abcd";
const URL_ = "https://baton.example.com/webhooks/twilio";
const ENV = {
  TWILIO_ACCOUNT_SID: SID,
  TWILIO_AUTH_TOKEN: TOKEN,
  TWILIO_API_ROOT: "http://twilio.test/",
};
const TARGET: TwilioTarget = { platform: "twilio", from: "+15005550006", to: "+15551234567" };
const PART = { index: 0, count: 1 };

/** An incoming SMS webhook's parameters as Twilio documents them. */
export function twilioSms(body: string, overrides: Record<string, string> = {}): URLSearchParams {
  return new URLSearchParams({
    ToCountry: "US",
    SmsMessageSid: "SM" + "0".repeat(32),
    NumMedia: "0",
    SmsSid: "SM" + "0".repeat(32),
    SmsStatus: "received",
    Body: body,
    To: "+15005550006",
    NumSegments: "1",
    MessageSid: "SM" + "0".repeat(32),
    AccountSid: SID,
    From: "+15551234567",
    ApiVersion: "2010-04-01",
    ...overrides,
  });
}

function raw(
  params: URLSearchParams | string,
  headers: Record<string, string>,
  url = URL_,
): RawRequest {
  return {
    headers: new Headers({ "content-type": "application/x-www-form-urlencoded", ...headers }),
    body: new TextEncoder().encode(String(params)),
    url,
    nowSeconds: 1_700_000_000,
  };
}

async function signed(params: URLSearchParams, url = URL_): Promise<RawRequest> {
  return raw(params, { "x-twilio-signature": await signTwilioRequest(TOKEN, url, params) }, url);
}

Deno.test("signTwilioRequest() matches Twilio's published example signature", async () => {
  const params = new URLSearchParams({
    CallSid: "CA1234567890ABCDE",
    Caller: "+12349013030",
    Digits: "1234",
    From: "+12349013030",
    To: "+18005551212",
  });
  assertStrictEquals(
    await signTwilioRequest("12345", "https://mycompany.com/myapp.php?foo=1&bar=2", params),
    "0/KCTR6DLpKmkAf8muzZqo1nDgQ=",
  );
});

Deno.test("twilioSignedContent() sorts parameters by name, then value, whatever order they came in", () => {
  const params = new URLSearchParams("b=2&a=1&c=3&a=0");
  assertStrictEquals(twilioSignedContent("https://x/y?q=1", params), "https://x/y?q=1a0a1b2c3");
});

Deno.test("twilioAdapter.verify() accepts a signature over the public URL and the form parameters", async () => {
  assertStrictEquals(await twilioAdapter.verify(await signed(twilioSms("hi")), ENV), null);
  const withQuery = `${URL_}?channel=sms`;
  assertStrictEquals(
    await twilioAdapter.verify(await signed(twilioSms("hi"), withQuery), ENV),
    null,
  );
});

Deno.test("twilioAdapter.verify() refuses another URL, changed parameters, another token, a JSON body or no header", async () => {
  const params = twilioSms("hi");
  const good = await signTwilioRequest(TOKEN, URL_, params);
  const changed = twilioSms("hi!");
  const cases: RawRequest[] = [
    raw(params, {}),
    raw(params, { "x-twilio-signature": "" }),
    raw(params, { "x-twilio-signature": good.slice(0, -2) }),
    raw(params, { "x-twilio-signature": good }, "http://baton.example.com/webhooks/twilio"),
    raw(params, { "x-twilio-signature": good }, `${URL_}?extra=1`),
    raw(changed, { "x-twilio-signature": good }),
    raw(params, { "x-twilio-signature": await signTwilioRequest("other", URL_, params) }),
    {
      ...raw(params, { "x-twilio-signature": good }),
      headers: new Headers({ "content-type": "application/json", "x-twilio-signature": good }),
    },
  ];
  for (const request of cases) {
    const refusal = await twilioAdapter.verify(request, ENV);
    assert(typeof refusal === "string", request.url);
    assert(!refusal.includes(TOKEN));
  }
});

Deno.test("publicUrl() puts PUBLIC_URL's origin and prefix in front of the request's path and query", () => {
  const seen = "http://worker.internal/webhooks/twilio?a=1";
  assertStrictEquals(publicUrl(undefined, seen), seen);
  assertStrictEquals(publicUrl("", seen), seen);
  assertStrictEquals(
    publicUrl("https://bot.example.com/", seen),
    "https://bot.example.com/webhooks/twilio?a=1",
  );
  assertStrictEquals(
    publicUrl("https://example.com/baton", seen),
    "https://example.com/baton/webhooks/twilio?a=1",
  );
  assertStrictEquals(publicUrl("not a url", seen), seen);
});

Deno.test("twilioAdapter.parse() turns an incoming SMS into a turn per number pair, deduplicated on MessageSid", async () => {
  const sid = "SM" + "a".repeat(32);
  const ingress = twilioAdapter.parse(
    await signed(twilioSms(" hello bot ", { MessageSid: sid })),
    ENV,
  );
  assertEquals(ingress, {
    kind: "message",
    message: {
      sessionKey: "twilio:+15005550006:+15551234567",
      deliveryKey: `twilio:${sid}`,
      // Nothing signed says when: kept a month.
      keyMemoryMs: 30 * 24 * 60 * 60 * 1000,
      text: "hello bot",
      context: {
        platform: "twilio",
        session_key: "twilio:+15005550006:+15551234567",
        chat_id: "+15551234567",
        chat_name: "+15551234567",
        thread_id: "",
        user_id: "+15551234567",
        user_name: "+15551234567",
        message_id: sid,
      },
      reply: { platform: "twilio", from: "+15005550006", to: "+15551234567" },
      sender: { platform: "twilio", user: "+15551234567", name: "+15551234567", direct: true },
    },
  });
});

Deno.test("twilioAdapter remembers a MessageSid for 30 days, past the inbox's day: Twilio signs no time", async () => {
  // X-Twilio-Signature covers the URL and the form, neither of which says when: a captured SMS
  // verifies for ever, and nothing in it can be aged. Its key is kept a month instead of a day.
  const day = 24 * 60 * 60 * 1000;
  // Nothing to judge by time: the same SMS parses the same whenever it comes.
  const sms = twilioSms("yes", { MessageSid: "SM" + "b".repeat(32) });
  const parsed = twilioAdapter.parse(await signed(sms), ENV);
  assert(parsed.kind === "message");
  assert((parsed.message.keyMemoryMs ?? 0) >= 30 * day);
  const now = twilioAdapter.parse(await signed(sms), ENV);
  const later = twilioAdapter.parse({ ...await signed(sms), nowSeconds: 1_800_000_000 }, ENV);
  assertEquals(later, now);
  assert(now.kind === "message");
  assertStrictEquals(now.message.deliveryKey, `twilio:SM${"b".repeat(32)}`);
});

Deno.test("twilioAdapter.parse() keeps WhatsApp addresses and the profile name", async () => {
  const ingress = twilioAdapter.parse(
    await signed(twilioSms("hola", {
      From: "whatsapp:+14155238886",
      To: "whatsapp:+15005550006",
      ProfileName: "Ana",
      WaId: "14155238886",
    })),
    ENV,
  );
  assert(ingress.kind === "message");
  assertStrictEquals(
    ingress.message.sessionKey,
    "twilio:whatsapp:+15005550006:whatsapp:+14155238886",
  );
  assertEquals(ingress.message.reply, {
    platform: "twilio",
    from: "whatsapp:+15005550006",
    to: "whatsapp:+14155238886",
  });
  assertEquals(ingress.message.sender, {
    platform: "twilio",
    user: "whatsapp:+14155238886",
    name: "Ana",
    direct: true,
  });
});

Deno.test("twilioAdapter.parse() answers status callbacks, other accounts, an empty message and junk with empty TwiML", async () => {
  const ignored = [
    new URLSearchParams({
      MessageSid: "SM" + "1".repeat(32),
      MessageStatus: "delivered",
      AccountSid: SID,
      From: "+15005550006",
      To: "+15551234567",
    }),
    twilioSms("other account", { AccountSid: "AC" + "f".repeat(32) }),
    twilioSms("", { NumMedia: "0" }),
    new URLSearchParams({ some: "thing" }),
  ];
  for (const params of ignored) {
    assertEquals(twilioAdapter.parse(await signed(params), ENV), {
      kind: "respond",
      status: 200,
      body: EMPTY_TWIML,
      contentType: "text/xml",
    });
  }
  assertEquals(twilioAdapter.acknowledgement, {
    status: 200,
    body: "<Response/>",
    contentType: "text/xml",
  });
});

Deno.test("twilioAdapter.send() posts a form to the Messages resource with basic auth", async () => {
  await withFetch(
    () => Response.json({ sid: "SM1", status: "queued" }, { status: 201 }),
    async (calls) => {
      assertEquals(await twilioAdapter.send(TARGET, "hello & bye", PART, ENV), { ok: true });
      assertStrictEquals(
        calls[0].url,
        `http://twilio.test/2010-04-01/Accounts/${SID}/Messages.json`,
      );
      assertStrictEquals(calls[0].headers.get("authorization"), `Basic ${btoa(`${SID}:${TOKEN}`)}`);
      assertStrictEquals(
        calls[0].headers.get("content-type"),
        "application/x-www-form-urlencoded",
      );
      assertEquals(Object.fromEntries(new URLSearchParams(calls[0].body)), {
        To: "+15551234567",
        From: "+15005550006",
        Body: "hello & bye",
      });
    },
  );
});

Deno.test("twilioAdapter.send() waits out a 429, reports refusals with Twilio's code, and never shows the token", async () => {
  await withFetch(
    () => Response.json({ code: 20429, message: "Too Many Requests" }, { status: 429 }),
    async () => {
      const result = await twilioAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && result.retryable && result.retryAfterMs === 1000);
    },
  );
  await withFetch(
    () =>
      Response.json({
        code: 63016,
        message: "Failed to send freeform message because you are outside the allowed window.",
        status: 400,
      }, { status: 400 }),
    async () => {
      const result = await twilioAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && !result.retryable && result.message.includes("63016"));
    },
  );
  await withFetch(
    () => Response.json({ code: 20003, message: `Authenticate ${TOKEN}` }, { status: 401 }),
    async () => {
      const result = await twilioAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && !result.message.includes(TOKEN), JSON.stringify(result));
    },
  );
  const result = await twilioAdapter.send(TARGET, "x", PART, { ...ENV, TWILIO_ACCOUNT_SID: "x" });
  assert(!result.ok && !result.retryable);
});

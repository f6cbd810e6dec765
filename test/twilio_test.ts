// POST /webhooks/twilio end to end: workerd, a fake model and a fake Twilio Messages API on loopback; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { signTwilioRequest } from "../lib/platforms/twilio.ts";
import { json, sessionState, settled, untilQueued } from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { pause, withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";

const SID = "AC" + "1234567890abcdef".repeat(2);
const TOKEN = "twilio-auth-token-0123456789abcd";
const PUBLIC = "https://sms.baton.example";
const URL_ = `${PUBLIC}/webhooks/twilio`;
const BOT = "+15005550006";
const USER = "+15551234567";
const SESSION = `twilio:${BOT}:${USER}`;
const SEND_PATH = `/2010-04-01/Accounts/${SID}/Messages.json`;
const VARS = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, PUBLIC_URL: PUBLIC };

let _next = 1;

/** An incoming SMS's parameters, as Twilio posts them. */
function sms(body: string, opts: { sid?: string } = {}): URLSearchParams {
  const sid = opts.sid ?? "SM" + String(_next++).padStart(32, "0");
  return new URLSearchParams({
    ToCountry: "US",
    SmsMessageSid: sid,
    NumMedia: "0",
    SmsSid: sid,
    SmsStatus: "received",
    Body: body,
    To: BOT,
    NumSegments: "1",
    MessageSid: sid,
    AccountSid: SID,
    From: USER,
    ApiVersion: "2010-04-01",
  });
}

/** POSTs a form as Twilio does, signed over PUBLIC_URL's webhook URL (or `signature` as given). */
async function post(
  worker: TestWorker,
  params: URLSearchParams,
  opts: { signature?: string | null } = {},
): Promise<Response> {
  const signature = opts.signature === undefined
    ? await signTwilioRequest(TOKEN, URL_, params)
    : opts.signature;
  return worker.fetch("/webhooks/twilio", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(signature === null ? {} : { "x-twilio-signature": signature }),
    },
    body: params.toString(),
  });
}

/** Asserts Twilio's acknowledgement: 200, text/xml, an empty `<Response/>`. */
async function expectTwiml(res: Response): Promise<void> {
  const text = await res.text();
  assertStrictEquals(res.status, 200, text);
  assertStrictEquals(res.headers.get("content-type"), "text/xml");
  assertStrictEquals(text, "<Response/>");
}

Deno.test("POST /webhooks/twilio answers empty TwiML, runs one turn and replies through the Messages API", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    await expectTwiml(await post(worker, sms("hello bot")));
    await twilio.waitForCalls(1);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["hello bot"]);
    const [call] = twilio.calls;
    assertStrictEquals(call.path, SEND_PATH);
    assertStrictEquals(call.headers.get("authorization"), `Basic ${btoa(`${SID}:${TOKEN}`)}`);
    assertEquals(call.body, { To: USER, From: BOT, Body: "hello bot" });
    await settled(worker, SESSION);
    assertStrictEquals((await sessionState(worker, SESSION)).messages.length, 2);
  });
});

Deno.test("POST /webhooks/twilio acknowledges while the model call is still running", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    fake.script(() => ({ kind: "hold" }));
    const res = await post(worker, sms("think hard"));
    await fake.waitForRequests(1);
    await expectTwiml(res);
    assertStrictEquals(fake.inFlight, 1);
    assertStrictEquals(twilio.calls.length, 0);
    fake.release();
    await twilio.waitForCalls(1);
    assertEquals(twilio.calls[0].body.Body, "think hard");
  });
});

Deno.test("POST /webhooks/twilio runs one turn for the same MessageSid delivered five times", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    fake.script(() => ({ kind: "hold" }));
    const delivery = sms("slow one");
    await expectTwiml(await post(worker, delivery));
    await fake.waitForRequests(1);
    const retries = await Promise.all(Array.from({ length: 5 }, () => post(worker, delivery)));
    for (const res of retries) await expectTwiml(res);
    fake.release();
    await twilio.waitForCalls(1);
    await settled(worker, SESSION);
    await pause(200);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(twilio.calls.length, 1);
  });
});

Deno.test("POST /webhooks/twilio runs two messages of one conversation as two turns in order", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    fake.script(holdOn("first"));
    await expectTwiml(await post(worker, sms("first")));
    await fake.waitForRequests(1);
    await expectTwiml(await post(worker, sms("second")));
    await untilQueued(worker, SESSION, 1);
    await twilio.waitForCalls(1);
    fake.release();
    await twilio.waitForCalls(3);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second"]);
    assertEquals(twilio.calls.map((c) => c.body.Body), [
      "Queued — I'll answer after the current reply.",
      "first",
      "second",
    ]);
  });
});

Deno.test("POST /webhooks/twilio sends a 4,000-character reply as ordered parts of at most 1,600", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    let long = "";
    for (let i = 0; long.length < 4000; i++) long += `w${i}` + (i % 10 === 9 ? "\n" : " ");
    long = long.slice(0, 4000);
    fake.script(() => ({ kind: "text", text: long }));
    await expectTwiml(await post(worker, sms("write a lot")));
    await settled(worker, SESSION);
    const parts = twilio.calls.map((c) => c.body.Body as string);
    assert(parts.length >= 3, `${parts.length} parts`);
    for (const part of parts) assert(part.length > 0 && part.length <= 1600, `${part.length}`);
    assertStrictEquals(parts.join(""), long);
  });
});

Deno.test("POST /webhooks/twilio waits out a 429, then delivers exactly once", async () => {
  await withPlatform(VARS, async (worker, _fake, twilio) => {
    const at: number[] = [];
    twilio.respond((_, index) => {
      at.push(Date.now());
      return index === 0
        ? {
          status: 429,
          headers: { "retry-after": "1" },
          body: { code: 20429, message: "Too Many Requests", status: 429 },
        }
        : { status: 201, body: { sid: "SM" + "9".repeat(32), status: "queued" } };
    });
    await expectTwiml(await post(worker, sms("rate limited")));
    await twilio.waitForCalls(2);
    await settled(worker, SESSION);
    await pause(300);
    assertStrictEquals(twilio.calls.length, 2);
    assert(at[1] - at[0] >= 950, `waited ${at[1] - at[0]} ms`);
    assertEquals(twilio.calls[0].body, twilio.calls[1].body);
  });
});

Deno.test("POST /webhooks/twilio acknowledges status callbacks with TwiML and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    const status = new URLSearchParams({
      MessageSid: "SM" + "7".repeat(32),
      MessageStatus: "delivered",
      SmsStatus: "delivered",
      AccountSid: SID,
      From: BOT,
      To: USER,
    });
    await expectTwiml(await post(worker, status));
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(twilio.calls.length, 0);
  });
});

Deno.test("POST /webhooks/twilio refuses a bad signature, or one over another URL, with 401 and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, twilio) => {
    const params = sms("intruder");
    const signatures = [
      await signTwilioRequest("not-the-token", URL_, params),
      await signTwilioRequest(TOKEN, "http://localhost/webhooks/twilio", params),
      "AAAA",
      "",
      null,
    ];
    for (const signature of signatures) {
      const res = await post(worker, params, { signature });
      const body = await json(res);
      assertStrictEquals(res.status, 401, JSON.stringify(body));
      assertEquals(body.error.type, "invalid_signature");
      assert(!JSON.stringify(body).includes(TOKEN));
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(twilio.calls.length, 0);
  });
});

Deno.test("POST /webhooks/twilio refuses with 403 and starts nothing while a secret is missing", async () => {
  for (const vars of [{ TWILIO_ACCOUNT_SID: SID }, { TWILIO_AUTH_TOKEN: TOKEN }]) {
    await withPlatform({ ...vars, PUBLIC_URL: PUBLIC }, async (worker, fake, twilio) => {
      const res = await post(worker, sms("anyone?"));
      const body = await json(res);
      assertStrictEquals(res.status, 403, JSON.stringify(body));
      assertEquals(body.error.type, "not_configured");
      assert(!JSON.stringify(body).includes(TOKEN));
      await pause(100);
      assertStrictEquals(fake.requests.length, 0);
      assertStrictEquals(twilio.calls.length, 0);
    });
  }
});

Deno.test("POST /webhooks/twilio answers a refused sender with TwiML too", async () => {
  await withPlatform(
    { ...VARS, ACCESS_POLICY: "allowlist", ALLOWED_USERS: "twilio:+10000000000" },
    async (worker, fake, twilio) => {
      await expectTwiml(await post(worker, sms("let me in")));
      await pause(300);
      assertStrictEquals(fake.requests.length, 0);
      // The one notice a private bot gives its direct chats, through the Messages API.
      assertStrictEquals(twilio.calls.length, 1);
      assertEquals(twilio.calls[0].body.To, USER);
    },
  );
});

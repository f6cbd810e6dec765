// POST /webhooks/twilio end to end: workerd (one for the file, the allowlist test its own), a fake model and a fake Twilio Messages API on loopback; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { signTwilioRequest } from "../lib/platforms/twilio.ts";
import { pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const SID = "AC" + "1234567890abcdef".repeat(2);
const TOKEN = "twilio-auth-token-0123456789abcd";
const PUBLIC = "https://sms.baton.example";
const URL_ = `${PUBLIC}/webhooks/twilio`;
const BOT = "+15005550006";
const USER = "+15551234567";
const VARS = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, PUBLIC_URL: PUBLIC };

// One Worker for the file's tests of the open policy; the allowlist test starts its own.
const baton = sharedBaton({ vars: VARS });

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

baton.test(
  "POST /webhooks/twilio acknowledges status callbacks with TwiML and no turn",
  async (worker, fake, twilio) => {
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
  },
);

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

baton.done();

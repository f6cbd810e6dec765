// POST /webhooks/twilio end to end: workerd (one for the file, the allowlist test its own), a fake model and a fake Twilio Messages API on loopback; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { ageSessions } from "./_support/age_sessions.ts";
import { sessionState, settled } from "./_support/clients.ts";
import { encode } from "./_support/drivers/mod.ts";
import {
  TWILIO_ACCOUNT_SID as SID,
  TWILIO_NUMBER as BOT,
  twilioDriver as driver,
} from "./_support/drivers/twilio.ts";
import { startFakePlatform } from "./_support/fake_platform.ts";
import { pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const USER = "+15551234567";
const VARS = driver.vars();

// One Worker for the file's tests of the open policy; the allowlist test starts its own.
const baton = sharedBaton({ vars: VARS });

let _next = 1;

/** An incoming SMS's parameters from USER, as twilioDriver shapes them. */
function sms(body: string): Record<string, string> {
  const sid = "SM" + String(_next++).padStart(32, "0");
  return driver.shape({ chat: USER, text: body, id: sid }) as Record<string, string>;
}

/** POSTs `params` as a form, as Twilio does, signed by twilioDriver over PUBLIC_URL's webhook URL. */
async function post(worker: TestWorker, params: Record<string, string>): Promise<Response> {
  const body = encode(driver, params);
  const headers = await driver.sign(body, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body });
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
    const status = {
      MessageSid: "SM" + "7".repeat(32),
      MessageStatus: "delivered",
      SmsStatus: "delivered",
      AccountSid: SID,
      From: BOT,
      To: USER,
    };
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

Deno.test("POST /webhooks/twilio runs an SMS once though its signed delivery comes again after the inbox's day: no second turn, no second reply", async () => {
  // Twilio signs no time: whoever captured the request can send it again, byte for byte, and it
  // verifies. The inbox forgets a key after 24 h; Twilio's MessageSids are kept a month.
  const dir = await tempPersistDir();
  const twilio = await startFakePlatform();
  const user = "+15559990001";
  const session = driver.session(user);
  const post = async (worker: TestWorker, text: string, sid: string) => {
    const body = encode(driver, driver.shape({ chat: user, text, id: sid }));
    const headers = await driver.sign(body, driver.credentials);
    await expectTwiml(await worker.fetch(driver.path, { method: "POST", headers, body }));
  };
  const captured = "SM" + "c".repeat(32);
  try {
    await withPlatform(VARS, async (worker) => {
      await post(worker, "yes, delete it", captured);
      await twilio.waitForCalls(1);
      await settled(worker, session);
    }, { persistDir: dir.path, platform: twilio });
    // A day and an hour on: past the inbox's memory of the key, and its row prunable.
    assertStrictEquals(await ageSessions(dir.path, 25 * 60 * 60 * 1000), 1);
    await withPlatform(VARS, async (worker, fake) => {
      await post(worker, "yes, delete it", captured);
      // A new SMS after the replay: had the replay been stored, it would run first.
      await post(worker, "and thanks", "SM" + "d".repeat(32));
      await twilio.waitForCalls(2);
      await settled(worker, session);
      assertStrictEquals(fake.requests.length, 1);
      const users = (await sessionState(worker, session)).messages.filter((m) => m.role === "user");
      assertEquals(users.map((m) => m.content), ["yes, delete it", "and thanks"]);
    }, { persistDir: dir.path, platform: twilio });
    assertEquals(twilio.calls.map((c) => c.body.To), [user, user]);
  } finally {
    await twilio.close();
    await dir.cleanup();
  }
});

baton.done();

// `npm run setup -- twilio --number …` against a loopback fake of Twilio's REST API (IncomingPhoneNumbers), its requests compared with twilio's own client's; Deno (no workerd).
import { assert, assertEquals, assertMatch } from "@std/assert";
import twilio from "twilio";
import { runSetup } from "../scripts/setup.ts";
import {
  type FakePlatform,
  type PlatformCall,
  startFakePlatform,
} from "./_support/fake_platform.ts";
import { TWILIO_ACCOUNT_SID as SID, twilioDriver } from "./_support/drivers/twilio.ts";

const TOKEN = twilioDriver.vars().TWILIO_AUTH_TOKEN;
const BASE = "https://bot.example.com/prefix";
const HOOK = `${BASE}/webhooks/twilio`;

/** An IncomingPhoneNumber as the fake keeps it (the fields the setup reads and writes). */
interface FakeNumber {
  sid: string;
  phone_number: string;
  sms_url: string;
  sms_method: string;
}

/** The account's numbers, fresh for each test: the bot's, and one its digits are a prefix of. */
function numbers(): FakeNumber[] {
  return [
    { sid: `PN${"a".repeat(32)}`, phone_number: "+15005550006", sms_url: "", sms_method: "POST" },
    {
      sid: `PN${"b".repeat(32)}`,
      phone_number: "+150055500061",
      sms_url: "https://other.example/sms",
      sms_method: "POST",
    },
  ];
}

/** Twilio's error body (https://www.twilio.com/docs/usage/twilios-response). */
const _error = (status: number, code: number, message: string) => ({
  status,
  body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
});

/**
 * Twilio's IncomingPhoneNumbers API for the account `SID` on the fake, over `account`: Basic auth
 * with the SID and auth token (else 401, code 20003); the list filtered by `PhoneNumber` as
 * Twilio does — a partial number matches every number holding it; a number's update (POST, form)
 * of `SmsUrl`/`SmsMethod`, an unknown SID 404.
 */
function twilioApi(platform: FakePlatform, account: FakeNumber[]): void {
  const root = `/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers`;
  const resource = (n: FakeNumber) => ({
    ...n,
    account_sid: SID,
    api_version: "2010-04-01",
    uri: `${root}/${n.sid}.json`,
  });
  platform.respond((call) => {
    const url = new URL(call.path, platform.url);
    if (call.headers.get("authorization") !== `Basic ${btoa(`${SID}:${TOKEN}`)}`) {
      return _error(401, 20003, "Authenticate");
    }
    if (call.method === "GET" && url.pathname === `${root}.json`) {
      const filter = url.searchParams.get("PhoneNumber") ?? "";
      const found = account.filter((n) => n.phone_number.includes(filter)).map(resource);
      return {
        status: 200,
        body: {
          incoming_phone_numbers: found,
          start: 0,
          end: found.length - 1,
          page: 0,
          page_size: 50,
          first_page_uri: `${root}.json?${url.searchParams}&PageSize=50&Page=0`,
          next_page_uri: null,
          previous_page_uri: null,
          uri: `${root}.json?${url.searchParams}&PageSize=50&Page=0`,
        },
      };
    }
    const one = new RegExp(`^${root}/(PN[0-9a-f]{32})\\.json$`).exec(url.pathname);
    const number = one && account.find((n) => n.sid === one[1]);
    if (one && !number) {
      return _error(404, 20404, `The requested resource ${url.pathname} was not found`);
    }
    if (number && call.method === "POST") {
      if (typeof call.body?.SmsUrl === "string") number.sms_url = call.body.SmsUrl;
      if (typeof call.body?.SmsMethod === "string") number.sms_method = call.body.SmsMethod;
      return { status: 200, body: resource(number) };
    }
    return _error(404, 20404, `The requested resource ${url.pathname} was not found`);
  });
}

/** Runs the CLI in process: its exit code and output, which never holds a credential. */
async function setup(args: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const code = await runSetup(args, {
    env: { ...twilioDriver.vars(), PUBLIC_URL: BASE, ...env },
    print: (line) => lines.push(line),
  });
  const output = lines.join("\n");
  const token = env.TWILIO_AUTH_TOKEN ?? TOKEN;
  for (const secret of [SID, token, btoa(`${SID}:${token}`)]) {
    assert(!output.includes(secret), `the output holds a credential:\n${output}`);
  }
  return { code, output };
}

/** What of a call Twilio reads: method, path, query, form fields, auth and body type. */
function _shape(call: PlatformCall) {
  const url = new URL(call.path, "http://x");
  return {
    method: call.method,
    path: url.pathname,
    query: [...url.searchParams].sort(),
    form: call.method === "POST" ? call.body : null,
    authorization: call.headers.get("authorization"),
    type: call.headers.get("content-type"),
  };
}

/** A test with a fresh fake Twilio holding `numbers()`, closed after. */
function withTwilio(
  name: string,
  fn: (platform: FakePlatform, account: FakeNumber[], env: Record<string, string>) => Promise<void>,
) {
  Deno.test(name, async () => {
    const platform = await startFakePlatform();
    try {
      const account = numbers();
      twilioApi(platform, account);
      await fn(platform, account, { TWILIO_API_ROOT: platform.url });
    } finally {
      await platform.close();
    }
  });
}

withTwilio(
  "runSetup() twilio --number points the number's SmsUrl here with the requests twilio's own client makes",
  async (platform, account, env) => {
    const { code, output } = await setup(["twilio", "--number", "+15005550006"], env);
    assertEquals(code, 0, output);
    assertMatch(
      output,
      /\+15005550006: incoming messages POST to https:\/\/bot\.example\.com\/prefix\/webhooks\/twilio/,
    );
    assertEquals(account.map((n) => [n.sms_url, n.sms_method]), [
      [HOOK, "POST"],
      ["https://other.example/sms", "POST"],
    ]);
    const ours = platform.calls.splice(0).map(_shape);
    // The same two steps with twilio's client, against the same fake: the requests must agree.
    const client = twilio(SID, TOKEN);
    client.api.baseUrl = platform.url;
    const [number] = await client.incomingPhoneNumbers.list({ phoneNumber: "+15005550006" });
    await client.incomingPhoneNumbers(number.sid).update({ smsUrl: HOOK, smsMethod: "POST" });
    assertEquals(ours, platform.calls.map(_shape));
  },
);

withTwilio(
  "runSetup() twilio --number sets only that very number: not a partial match, spaces allowed, no + refused",
  async (platform, account, env) => {
    // Twilio's PhoneNumber filter matches partially: +1500555000 finds both numbers.
    const partial = await setup(["twilio", "--number", "+1500555000"], env);
    assertEquals(partial.code, 1, partial.output);
    assertMatch(
      partial.output,
      /the account has no number \+1500555000 \(it has \+15005550006, \+150055500061\)/,
    );
    // The console writes numbers with spaces and dashes: the number itself is meant.
    const spaced = await setup(["twilio", "--number", "+1 500-555-0006"], env);
    assertEquals(spaced.code, 0, spaced.output);
    assertEquals(account.map((n) => n.sms_url), [HOOK, "https://other.example/sms"]);
    const local = await setup(["twilio", "--number", "5005550006"], env);
    assertEquals(local.code, 1, local.output);
    assertMatch(local.output, /--number 5005550006 is not an E\.164 number/);
    assertEquals(platform.calls.filter((c) => c.method === "POST").length, 1);
  },
);

withTwilio(
  "runSetup() twilio with a wrong auth token says Twilio refused the credentials, prints neither, exits 1",
  async (platform, account, env) => {
    const { code, output } = await setup(["twilio", "--number", "+15005550006"], {
      ...env,
      TWILIO_AUTH_TOKEN: "not-the-auth-token-0000000000000",
    });
    assertEquals(code, 1, output);
    assertMatch(
      output,
      /Twilio refused TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN \(401 Authenticate\)/,
    );
    assertEquals(platform.calls.length, 1);
    assertEquals(account[0].sms_url, "");
  },
);

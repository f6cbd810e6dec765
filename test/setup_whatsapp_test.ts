// `npm run setup -- whatsapp --app-id …`: the app's webhook subscription read back from a loopback fake of the Graph API (`GET /{app-id}/subscriptions`); Deno (no workerd).
import { assert, assertEquals, assertMatch } from "@std/assert";
import { runSetup } from "../scripts/setup.ts";
import { type FakePlatform, startFakePlatform } from "./_support/fake_platform.ts";
import { whatsappDriver } from "./_support/drivers/whatsapp.ts";

const VARS = whatsappDriver.vars();
const APP_ID = "1234567890123456";
const BASE = "https://bot.example.com";
const HOOK = `${BASE}/webhooks/whatsapp`;

/** One entry of the app's `subscriptions` edge, as the Graph API lists it. */
interface Subscription {
  object: string;
  callback_url: string;
  active: boolean;
  fields: { name: string; version: string }[];
}

/** The WhatsApp subscription baton wants: this deployment's callback, the `messages` field. */
const _RIGHT: Subscription = {
  object: "whatsapp_business_account",
  callback_url: HOOK,
  active: true,
  fields: [{ name: "messages", version: "v21.0" }],
};

/**
 * The Graph API's `GET /v21.0/{app-id}/subscriptions` on the fake, listing `data`: only to the
 * app access token `{app-id}|{app-secret}` (anything else 400, OAuthException code 190, as Graph
 * answers a bad token); any other path 404.
 */
function graphApi(platform: FakePlatform, data: Subscription[]): void {
  platform.respond((call) => {
    if (call.headers.get("authorization") !== `Bearer ${APP_ID}|${VARS.WHATSAPP_APP_SECRET}`) {
      return {
        status: 400,
        body: {
          error: {
            message: "Invalid OAuth access token signature.",
            type: "OAuthException",
            code: 190,
            fbtrace_id: "AbCdEf",
          },
        },
      };
    }
    if (call.method === "GET" && call.path === `/v21.0/${APP_ID}/subscriptions`) {
      return { status: 200, body: { data } };
    }
    return { status: 404, body: { error: { message: "Unknown path", code: 803 } } };
  });
}

/** Runs `setup whatsapp --app-id` against a fake Graph API listing `data`: exit code, output. */
async function readBack(data: Subscription[], env: Record<string, string> = {}) {
  const platform = await startFakePlatform();
  try {
    graphApi(platform, data);
    const lines: string[] = [];
    const code = await runSetup(["whatsapp", "--app-id", APP_ID], {
      env: { ...VARS, PUBLIC_URL: BASE, WHATSAPP_API_ROOT: `${platform.url}/v21.0`, ...env },
      print: (line) => lines.push(line),
    });
    const output = lines.join("\n");
    for (const secret of [VARS.WHATSAPP_APP_SECRET, env.WHATSAPP_APP_SECRET].filter(Boolean)) {
      assert(!output.includes(secret!), `the output holds the app secret:\n${output}`);
    }
    return { code, output, calls: platform.calls.map((c) => `${c.method} ${c.path}`) };
  } finally {
    await platform.close();
  }
}

Deno.test("runSetup() whatsapp --app-id reads back a subscription here with messages: ok", async () => {
  const { code, output, calls } = await readBack([
    { object: "page", callback_url: "https://elsewhere.example/page", active: true, fields: [] },
    _RIGHT,
  ]);
  assertEquals(code, 0, output);
  assertMatch(
    output,
    /✓ WhatsApp delivers messages to https:\/\/bot\.example\.com\/webhooks\/whatsapp/,
  );
  assertEquals(calls, [`GET /v21.0/${APP_ID}/subscriptions`]);
});

Deno.test("runSetup() whatsapp --app-id names every difference: the callback URL and the missing field", async () => {
  const { code, output } = await readBack([{
    ..._RIGHT,
    callback_url: "https://old.example/webhooks/whatsapp",
    fields: [{ name: "message_template_status_update", version: "v21.0" }],
  }]);
  assertEquals(code, 1, output);
  assertMatch(
    output,
    /WhatsApp delivers to https:\/\/old\.example\/webhooks\/whatsapp, not to https:\/\/bot\.example\.com\/webhooks\/whatsapp/,
  );
  assertMatch(
    output,
    /subscribed fields are message_template_status_update: subscribe to messages/,
  );
});

Deno.test("runSetup() whatsapp --app-id refuses an inactive subscription, or none", async () => {
  const inactive = await readBack([{ ..._RIGHT, active: false }]);
  assertEquals(inactive.code, 1, inactive.output);
  assertMatch(inactive.output, /the WhatsApp subscription is inactive/);
  const none = await readBack([]);
  assertEquals(none.code, 1, none.output);
  assertMatch(none.output, /the app has no whatsapp_business_account subscription/);
});

Deno.test("runSetup() whatsapp --app-id with a wrong app secret names the settings Graph refused", async () => {
  const { code, output } = await readBack([_RIGHT], {
    WHATSAPP_APP_SECRET: "not-the-app-secret-000",
  });
  assertEquals(code, 1, output);
  assertMatch(
    output,
    /the Graph API refused --app-id and WHATSAPP_APP_SECRET \(400: Invalid OAuth access token signature\.\)/,
  );
});

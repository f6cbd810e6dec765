// Unit tests of replyChannel() over the adapter table: one target check per send, splitting by platform; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { replyChannel, type ReplyTarget } from "../chat/mod.ts";
import { platformAdapters, PLATFORMS } from "./mod.ts";

/** Every webhook platform's adapter, loaded. */
const ADAPTERS = await platformAdapters();

/** Every adapter's API root pointed at one loopback server that counts requests and answers ok. */
async function _withApis(
  fn: (channel: ReturnType<typeof replyChannel>, requests: () => number) => Promise<void>,
): Promise<void> {
  let count = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    count++;
    await req.body?.cancel();
    return Response.json({ ok: true });
  });
  const root = `http://127.0.0.1:${server.addr.port}`;
  const env = {
    TELEGRAM_BOT_TOKEN: "1:secret",
    TELEGRAM_API_ROOT: root,
    SLACK_API_ROOT: root,
    DISCORD_APPLICATION_ID: "1",
    DISCORD_API_ROOT: root,
    GITHUB_API_ROOT: root,
    WHATSAPP_API_ROOT: root,
    LINE_API_ROOT: root,
    TWILIO_API_ROOT: root,
    TWILIO_ACCOUNT_SID: "AC" + "0".repeat(32),
  };
  try {
    await fn(replyChannel(ADAPTERS, env), () => count);
  } finally {
    await server.shutdown();
  }
}

const _PART = { index: 0, count: 1 };

const _valid: ReplyTarget[] = [
  { platform: "telegram", chat_id: 42, message_id: 7 },
  { platform: "slack", channel: "C1", thread_ts: "1.1" },
  { platform: "discord", application_id: "1", token: "tok" },
  { platform: "github", repo: "octo/hello", issue: 3 },
  { platform: "whatsapp", phone_number_id: "106540352242922", to: "16315551181" },
  { platform: "line", to: "U4af4980629" },
  { platform: "twilio", from: "+15005550006", to: "whatsapp:+15551234567" },
];

const _invalid: ReplyTarget[] = [
  { platform: "telegram" },
  { platform: "telegram", chat_id: 1.5 },
  { platform: "slack", channel: "C1/../x" },
  { platform: "slack", channel: "C1", thread_ts: 12 },
  { platform: "discord", token: "" },
  { platform: "github", repo: "no-slash", issue: 3 },
  { platform: "github", repo: "octo/hello", issue: "3" },
  { platform: "whatsapp", phone_number_id: "../x", to: "16315551181" },
  { platform: "whatsapp", phone_number_id: "1", to: "+1 555" },
  { platform: "line", to: "U/../x" },
  { platform: "twilio", from: "+1", to: "" },
  { platform: "teams", serviceUrl: "ftp://smba.example/", conversation: "a:1" },
  { platform: "teams", serviceUrl: "https://smba.example/", conversation: "" },
  { platform: "google-chat", space: "spaces/../../v1/x" },
  { platform: "google-chat", space: "spaces/AAA", thread: "spaces/AAA/messages/1" },
];

Deno.test("replyChannel() sends a valid target of every platform through its adapter", async () => {
  await _withApis(async (channel, requests) => {
    for (const target of _valid) {
      assertEquals(await channel.send(target, "hi", _PART), { ok: true }, target.platform);
    }
    assertStrictEquals(requests(), _valid.length);
  });
});

Deno.test("replyChannel() refuses a target its adapter's schema rejects, final and without a request", async () => {
  await _withApis(async (channel, requests) => {
    for (const target of _invalid) {
      const result = await channel.send(target, "hi", _PART);
      assert(!result.ok, JSON.stringify(target));
      assertEquals([result.status, result.retryable], [0, false]);
      assert(result.message.startsWith(`the ${target.platform} reply target is invalid: `));
    }
    assertStrictEquals(requests(), 0);
  });
});

Deno.test("replyChannel() never names a target's values in its refusal", async () => {
  await _withApis(async (channel) => {
    const target = { platform: "discord", token: 12345678987654321, application_id: "1" };
    const result = await channel.send(target, "hi", _PART);
    assert(!result.ok && result.message.includes("token"));
    assert(!result.message.includes("12345678987654321"), result.message);
  });
});

Deno.test("replyChannel() answers an unknown platform with a final failure, not a throw", async () => {
  await _withApis(async (channel, requests) => {
    const target = { platform: "irc", channel: "#x" };
    assertEquals(channel.split(target, "a long text"), ["a long text"]);
    const result = await channel.send(target, "hi", _PART);
    assertEquals(result, {
      ok: false,
      status: 0,
      retryable: false,
      message: 'no adapter for platform "irc"',
    });
    assertStrictEquals(requests(), 0);
  });
});

Deno.test("replyChannel() splits by each adapter's message limit", async () => {
  await _withApis((channel) => {
    const text = "x".repeat(4097);
    assertStrictEquals(channel.split(_valid[0], text).length, 2); // Telegram: 4096
    assertStrictEquals(channel.split(_valid[1], text).length, 1); // Slack: 40,000
    assertStrictEquals(channel.split(_valid[2], text).length, 3); // Discord: 2000
    return Promise.resolve();
  });
});

Deno.test("PLATFORMS names each adapter it loads and says which answer a GET, before loading it", async () => {
  const loaded = await Promise.all(PLATFORMS.map((platform) => platform.load()));
  assertEquals(loaded.map((adapter) => adapter.name), PLATFORMS.map((platform) => platform.name));
  assertEquals(
    loaded.map((adapter) => typeof adapter.handshake === "function"),
    PLATFORMS.map((platform) => platform.handshake),
  );
  // One adapter per platform: loaded again, the same object; platformAdapters() is the table.
  assertStrictEquals(await PLATFORMS[0].load(), loaded[0]);
  assertEquals(ADAPTERS, loaded);
});

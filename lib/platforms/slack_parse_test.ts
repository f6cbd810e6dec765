// Unit tests for lib/platforms/slack.ts: url_verification and event parsing into turns; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { PayloadError, type PlatformMessage } from "../chat/mod.ts";
import { slackAdapter } from "./slack.ts";
import { BOT, callback, dm, ENV, mention, signed } from "./_slack_fixtures.ts";

async function parsed(body: string): Promise<PlatformMessage> {
  const ingress = slackAdapter.parse(await signed(body), ENV);
  if (ingress.kind !== "message") {
    throw new Error(`expected a message, got ${JSON.stringify(ingress)}`);
  }
  return ingress.message;
}

async function assertIgnored(body: string): Promise<void> {
  assertEquals(slackAdapter.parse(await signed(body), ENV), {
    kind: "respond",
    status: 200,
    body: { ok: true },
  });
}

Deno.test("slackAdapter.parse() answers url_verification with its challenge", async () => {
  const body = JSON.stringify({
    token: "t",
    challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    type: "url_verification",
  });
  assertEquals(slackAdapter.parse(await signed(body), ENV), {
    kind: "respond",
    status: 200,
    body: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" },
  });
});

Deno.test("slackAdapter.parse() turns an app_mention into a threaded turn without the bot mention", async () => {
  const message = await parsed(callback(mention()));
  assertEquals(message, {
    sessionKey: "slack:T1:C1:1700000000.000100",
    deliveryKey: "slack:C1:1700000000.000100",
    text: "hello there",
    context: {
      platform: "slack",
      session_key: "slack:T1:C1:1700000000.000100",
      chat_id: "C1",
      chat_name: "",
      thread_id: "1700000000.000100",
      user_id: "U1",
      user_name: "U1",
      message_id: "1700000000.000100",
    },
    reply: { platform: "slack", channel: "C1", thread_ts: "1700000000.000100" },
    sender: { platform: "slack", user: "T1/U1", name: "U1", direct: false },
  });
});

Deno.test("slackAdapter.parse() keys an app_mention inside a thread by the thread", async () => {
  const message = await parsed(
    callback(mention({ ts: "1700000050.000300", thread_ts: "1700000000.000100" })),
  );
  assertEquals(message.sessionKey, "slack:T1:C1:1700000000.000100");
  assertEquals(message.deliveryKey, "slack:C1:1700000050.000300");
  assertEquals(message.context.thread_id, "1700000000.000100");
  assertEquals(message.context.message_id, "1700000050.000300");
  assertEquals(message.reply, { platform: "slack", channel: "C1", thread_ts: "1700000000.000100" });
});

Deno.test("slackAdapter.parse() strips only the bot's own leading mention", async () => {
  assertEquals((await parsed(callback(mention({ text: `<@${BOT}|baton>  hi` })))).text, "hi");
  assertEquals(
    (await parsed(callback(mention({ text: `<@U2> look, <@${BOT}>` })))).text,
    `<@U2> look, <@${BOT}>`,
  );
});

Deno.test("slackAdapter.parse() strips a leading mention of an app_mention when the bot id is not in the payload", async () => {
  const body = JSON.parse(callback(mention()));
  delete body.authorizations;
  assertEquals((await parsed(JSON.stringify(body))).text, "hello there");
});

Deno.test("slackAdapter.parse() keys a direct message by the conversation and replies unthreaded", async () => {
  const message = await parsed(callback(dm()));
  assertEquals(message, {
    sessionKey: "slack:T1:D1",
    deliveryKey: "slack:D1:1700000000.000200",
    text: "hi in private",
    context: {
      platform: "slack",
      session_key: "slack:T1:D1",
      chat_id: "D1",
      chat_name: "",
      thread_id: "",
      user_id: "U1",
      user_name: "U1",
      message_id: "1700000000.000200",
    },
    reply: { platform: "slack", channel: "D1" },
    sender: { platform: "slack", user: "T1/U1", name: "U1", direct: true },
  });
});

Deno.test("slackAdapter.parse() keys a direct message inside a thread by the thread", async () => {
  const message = await parsed(
    callback(dm({ ts: "1700000100.000400", thread_ts: "1700000000.000200" })),
  );
  assertEquals(message.sessionKey, "slack:T1:D1:1700000000.000200");
  assertEquals(message.context.thread_id, "1700000000.000200");
  assertEquals(message.reply, { platform: "slack", channel: "D1", thread_ts: "1700000000.000200" });
});

Deno.test("slackAdapter.parse() gives an app_mention and its message twin the same session and delivery key", async () => {
  const ts = "1700000000.000900";
  const a = await parsed(callback(mention({ channel: "D1", ts, text: `<@${BOT}> twin` })));
  const b = await parsed(callback(dm({ ts, text: `<@${BOT}> twin` })));
  assertEquals([a.sessionKey, a.deliveryKey, a.text], [b.sessionKey, b.deliveryKey, b.text]);
  assertEquals(a.deliveryKey, `slack:D1:${ts}`);
});

Deno.test("slackAdapter.parse() uses event.team when the envelope has no team_id", async () => {
  const body = JSON.parse(callback(dm({ team: "T9" })));
  delete body.team_id;
  assertEquals((await parsed(JSON.stringify(body))).sessionKey, "slack:T9:D1");
});

Deno.test("slackAdapter.parse() ignores bot messages, subtypes, channel messages and other events", async () => {
  const ignored = [
    dm({ bot_id: "B1" }),
    mention({ bot_id: "B1" }),
    dm({ user: BOT }),
    dm({ subtype: "bot_message" }),
    dm({ subtype: "message_changed", message: { text: "edited" } }),
    dm({ subtype: "message_deleted" }),
    // An upload with neither a comment nor a file in it: nothing to answer.
    dm({ subtype: "file_share", text: "", files: [] }),
    {
      type: "message",
      subtype: "channel_join",
      user: "U1",
      text: "joined",
      ts: "1.1",
      channel: "C1",
      channel_type: "channel",
    },
    dm({ channel: "C1", channel_type: "channel" }),
    dm({ channel: "G1", channel_type: "mpim" }),
    dm({ text: undefined }),
    dm({ user: undefined }),
    mention({ text: `<@${BOT}>` }),
    dm({ text: "   " }),
    dm({ channel: "D1/../x" }),
    dm({ ts: "yesterday" }),
    dm({ thread_ts: 12 }),
    {
      type: "reaction_added",
      user: "U1",
      reaction: "thumbsup",
      item: { type: "message", channel: "C1", ts: "1.1" },
    },
    { type: "app_home_opened", user: "U1", channel: "D1" },
  ];
  for (const event of ignored) await assertIgnored(callback(event));
  await assertIgnored(
    JSON.stringify({ type: "app_rate_limited", team_id: "T1", minute_rate_limited: 1 }),
  );
  await assertIgnored(JSON.stringify({ type: "event_callback", event: dm() }));
  await assertIgnored(JSON.stringify({ type: "url_verification" }));
  await assertIgnored(JSON.stringify([1, 2]));
  await assertIgnored("null");
});

Deno.test("slackAdapter.parse() ignores form bodies other than ssl_check (slash commands, interactivity)", async () => {
  const body = "command=%2Fbaton&text=hi&team_id=T1&channel_id=C1&user_id=U1";
  const request = await signed(body, { contentType: "application/x-www-form-urlencoded" });
  assertStrictEquals(await slackAdapter.verify(request, ENV), null);
  assertEquals(slackAdapter.parse(request, ENV), {
    kind: "respond",
    status: 200,
    body: { ok: true },
  });
});

Deno.test("slackAdapter.parse() throws PayloadError for a signed body that is not JSON", async () => {
  const request = await signed("{nope");
  assertStrictEquals(await slackAdapter.verify(request, ENV), null);
  const error = assertThrows(() => slackAdapter.parse(request, ENV));
  assert(error instanceof PayloadError);
});

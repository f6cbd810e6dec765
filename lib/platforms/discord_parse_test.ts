// Unit tests for lib/platforms/discord.ts: PING, slash commands and ignored interactions; Deno.
import { setLogSink } from "../runtime/mod.ts";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import type { Ingress, PlatformMessage } from "../chat/mod.ts";
import { DISCORD_NO_TEXT_NOTICE, discordAdapter } from "./discord.ts";
import { APP_ID, discordFixtures, TOKEN } from "./_discord_fixtures.ts";

const { ENV, signed } = discordFixtures(await discordTestKeys(), signDiscordRequest);

function command(options: unknown[] | undefined, extra: Record<string, unknown> = {}) {
  return {
    id: "1200000000000000001",
    type: 2,
    application_id: APP_ID,
    token: TOKEN,
    channel_id: "1300000000000000001",
    channel: { id: "1300000000000000001", name: "general", type: 0 },
    guild_id: "1400000000000000001",
    member: {
      user: { id: "1500000000000000001", username: "ada", global_name: "Ada L." },
      roles: [],
    },
    data: { id: "1600000000000000001", name: "ask", type: 1, options },
    ...extra,
  };
}

async function parse(payload: unknown): Promise<Ingress> {
  return discordAdapter.parse(await signed(payload), ENV);
}

function messageOf(ingress: Ingress): PlatformMessage {
  assertStrictEquals(ingress.kind, "message");
  if (ingress.kind !== "message") throw new Error("unreachable");
  return ingress.message;
}

Deno.test("discordAdapter.parse() answers PING with PONG", async () => {
  assertEquals(await parse({ id: "1", type: 1, application_id: APP_ID, token: TOKEN }), {
    kind: "respond",
    status: 200,
    body: { type: 1 },
  });
  assertEquals(await parse({ id: "1", type: 1, application_id: APP_ID }), {
    kind: "respond",
    status: 200,
    body: { type: 1 },
  });
});

Deno.test("discordAdapter.parse() turns a slash command's string option into a message", async () => {
  const ingress = await parse(command([{ name: "prompt", type: 3, value: "hello there" }]));
  assertEquals(ingress, {
    kind: "message",
    message: {
      sessionKey: "discord:1300000000000000001",
      deliveryKey: "discord:1200000000000000001",
      text: "hello there",
      context: {
        platform: "discord",
        session_key: "discord:1300000000000000001",
        chat_id: "1300000000000000001",
        chat_name: "general",
        thread_id: "",
        user_id: "1500000000000000001",
        user_name: "Ada L.",
        message_id: "1200000000000000001",
      },
      reply: { platform: "discord", application_id: APP_ID, token: TOKEN },
      sender: { platform: "discord", user: "1500000000000000001", name: "Ada L.", direct: false },
    },
    ack: { status: 200, body: { type: 5 } },
  });
});

Deno.test("discordAdapter.parse() finds the string option inside subcommand groups", async () => {
  const message = messageOf(
    await parse(command([{
      name: "group",
      type: 2,
      options: [{
        name: "sub",
        type: 1,
        options: [
          { name: "count", type: 4, value: 3 },
          { name: "flag", type: 5, value: true },
          { name: "text", type: 3, value: "deep text" },
          { name: "more", type: 3, value: "second" },
        ],
      }],
    }])),
  );
  assertStrictEquals(message.text, "deep text");
});

Deno.test("discordAdapter.parse() answers a command without a string option with a notice and no turn", async () => {
  for (
    const options of [undefined, [], [{ name: "n", type: 4, value: 1 }], [{
      name: "t",
      type: 3,
      value: "  ",
    }]]
  ) {
    assertEquals(await parse(command(options)), {
      kind: "respond",
      status: 200,
      body: { type: 4, data: { content: DISCORD_NO_TEXT_NOTICE, flags: 64 } },
    });
  }
});

Deno.test("discordAdapter.parse() reads a DM user and falls back to username and channel id", async () => {
  const payload = command([{ name: "prompt", type: 3, value: "hi" }], {
    member: undefined,
    guild_id: undefined,
    channel: undefined,
    user: { id: "1700000000000000001", username: "grace", global_name: null },
  });
  const message = messageOf(await parse(payload));
  assertEquals(message.context, {
    platform: "discord",
    session_key: "discord:1300000000000000001",
    chat_id: "1300000000000000001",
    chat_name: "",
    thread_id: "",
    user_id: "1700000000000000001",
    user_name: "grace",
    message_id: "1200000000000000001",
  });
});

Deno.test("discordAdapter.parse() ignores components, modals and autocomplete without a turn", async () => {
  const base = { id: "1", application_id: APP_ID, token: TOKEN, channel_id: "2" };
  assertEquals(await parse({ ...base, type: 3, data: { custom_id: "x" } }), {
    kind: "respond",
    status: 200,
    body: { type: 6 },
  });
  assertEquals(await parse({ ...base, type: 5, data: { custom_id: "m" } }), {
    kind: "respond",
    status: 200,
    body: { type: 6 },
  });
  assertEquals(await parse({ ...base, type: 4, data: { options: [] } }), {
    kind: "respond",
    status: 200,
    body: { type: 8, data: { choices: [] } },
  });
});

Deno.test("discordAdapter.parse() acknowledges app webhook events with 204 and no body", async () => {
  for (
    const payload of [
      { version: 1, application_id: APP_ID, type: 0 },
      { version: 1, application_id: APP_ID, type: 1, event: { type: "APPLICATION_AUTHORIZED" } },
    ]
  ) {
    assertEquals(await parse(payload), { kind: "respond", status: 204, body: null });
  }
});

Deno.test("discordAdapter.parse() ignores payloads lacking a turn's fields", async () => {
  for (
    const payload of [
      {
        ...command([{ name: "p", type: 3, value: "x" }]),
        channel_id: undefined,
        channel: undefined,
      },
      { ...command([{ name: "p", type: 3, value: "x" }]), member: undefined },
      { ...command([{ name: "p", type: 3, value: "x" }]), token: undefined },
      { id: "1", type: 99, application_id: APP_ID, token: TOKEN },
      [1, 2],
    ]
  ) {
    assertEquals(await parse(payload), { kind: "respond", status: 200, body: {} });
  }
});

Deno.test("discordAdapter.parse() refuses a command for another application id with a notice", async () => {
  const warnings: string[] = [];
  const restore = setLogSink((level, line) => void (level === "warn" && warnings.push(line)));
  let ingress: Ingress;
  try {
    ingress = await parse(command([{ name: "p", type: 3, value: "x" }], { application_id: "999" }));
  } finally {
    restore();
  }
  assertStrictEquals(warnings.length, 1);
  assert(!JSON.stringify(warnings).includes(TOKEN));
  assertStrictEquals(ingress.kind, "respond");
  if (ingress.kind === "respond") assertStrictEquals((ingress.body as { type: number }).type, 4);
});

Deno.test("discordAdapter.parse() throws PayloadError on invalid JSON", async () => {
  const request = await signed(null, { body: "{not json" });
  let error: unknown;
  try {
    discordAdapter.parse(request, ENV);
  } catch (e) {
    error = e;
  }
  assertStrictEquals((error as Error)?.name, "PayloadError");
});

Deno.test("discordAdapter.parse() calls the bot's DM direct, and a server or group DM not", async () => {
  const dm = command([{ name: "prompt", type: 3, value: "hi" }], {
    guild_id: undefined,
    member: undefined,
    user: { id: "1500000000000000002", username: "bob", global_name: null },
    channel: { id: "1300000000000000002", type: 1 },
    context: 1,
  });
  assertEquals(messageOf(await parse(dm)).sender, {
    platform: "discord",
    user: "1500000000000000002",
    name: "bob",
    direct: true,
  });
  const groupDm = { ...dm, channel: { id: "1300000000000000003", type: 3 }, context: 2 };
  assertStrictEquals(messageOf(await parse(groupDm)).sender.direct, false);
  const server = command([{ name: "prompt", type: 3, value: "hi" }]);
  assertStrictEquals(messageOf(await parse(server)).sender.direct, false);
});

Deno.test("discordAdapter.inlineNotice() answers with an ephemeral message", () => {
  assertEquals(discordAdapter.inlineNotice!("private"), {
    status: 200,
    body: { type: 4, data: { content: "private", flags: 64 } },
  });
});

// POST /webhooks/discord end to end: Ed25519-signed interactions into baton in workerd, replies to a fake Discord API; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { json, sessionState, settled, untilQueued } from "./_support/clients.ts";
import { discordTestKeys, signDiscordRequest } from "./_support/discord_signer.ts";
import { echoSessionInfo, holdOn } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";

const APP_ID = "1100000000000000001";
const CHANNEL = "1300000000000000001";

const keys = await discordTestKeys();
const PUBLIC_KEY = keys.publicKeyHex;
const VARS = { DISCORD_PUBLIC_KEY: PUBLIC_KEY, DISCORD_APPLICATION_ID: APP_ID };

let _ids = 0;

/** A slash command interaction (`/ask prompt:<text>`) in CHANNEL unless overridden. */
function command(text: string | null, extra: Record<string, unknown> = {}) {
  const id = `12000000000${String(++_ids).padStart(8, "0")}`;
  return {
    id,
    type: 2,
    application_id: APP_ID,
    token: `token-${id}`,
    channel_id: CHANNEL,
    channel: { id: CHANNEL, name: "general", type: 0 },
    guild_id: "1400000000000000001",
    member: {
      user: { id: "1500000000000000001", username: "ada", global_name: "Ada L." },
      roles: [],
    },
    data: {
      id: "1600000000000000001",
      name: "ask",
      type: 1,
      options: text === null ? [] : [{ name: "prompt", type: 3, value: text }],
    },
    ...extra,
  };
}

async function interact(
  worker: TestWorker,
  payload: unknown,
  opts: { timestamp?: number; signature?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const body = JSON.stringify(payload);
  const signature = opts.signature ??
    await signDiscordRequest({ privateKey: keys.privateKey, timestamp, body });
  return worker.fetch("/webhooks/discord", {
    method: "POST",
    headers: opts.headers ?? {
      "content-type": "application/json",
      "x-signature-ed25519": signature,
      "x-signature-timestamp": timestamp,
    },
    body,
  });
}

function editPath(token: string): string {
  return `/webhooks/${APP_ID}/${token}/messages/@original`;
}

Deno.test("POST /webhooks/discord runs one turn and edits the deferred reply of the interaction", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const payload = command("hello discord");
    const res = await interact(worker, payload);
    await expectOk(res, { type: 5 });
    await discord.waitForCalls(1);
    await pause(300);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(fake.requests[0].lastUserText, "hello discord");
    assertStrictEquals(discord.calls.length, 1);
    const [call] = discord.calls;
    assertStrictEquals(call.method, "PATCH");
    assertStrictEquals(call.path, editPath(payload.token));
    // `components: []`: an edit of @original takes away buttons a question may have left there.
    assertEquals(call.body, {
      content: "hello discord",
      allowed_mentions: { parse: [] },
      components: [],
    });
    const state = await sessionState(worker, `discord:${CHANNEL}`);
    assertEquals(state.messages.map((m) => m.content), ["hello discord", "hello discord"]);
  });
});

Deno.test("POST /webhooks/discord answers a signed PING with PONG and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const ping = { id: "1", type: 1, application_id: APP_ID, token: "ping-token", version: 1 };
    const res = await interact(worker, ping);
    await expectOk(res, { type: 1 });
    const unsigned = await interact(worker, ping, { signature: "00".repeat(64) });
    assertStrictEquals(unsigned.status, 401);
    await unsigned.body?.cancel();
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
  });
});

Deno.test("POST /webhooks/discord refuses wrong, malformed and missing signatures with 401 and no turn", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const payload = command("never run");
    const good = await signDiscordRequest({
      privateKey: keys.privateKey,
      timestamp: String(Math.floor(Date.now() / 1000)),
      body: JSON.stringify(command("other body")),
    });
    const cases: Parameters<typeof interact>[2][] = [
      { signature: good },
      { signature: "00".repeat(64) },
      { signature: "not-hex" },
      { signature: good.slice(0, 126) },
      { headers: { "content-type": "application/json" } },
    ];
    for (const opts of cases) {
      const res = await interact(worker, payload, opts);
      assertStrictEquals(res.status, 401);
      const body = await json(res);
      assertStrictEquals(body.error.type, "invalid_signature");
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
  });
});

Deno.test("POST /webhooks/discord refuses a timestamp more than 5 minutes off with 401", async () => {
  await withPlatform(VARS, async (worker, fake) => {
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 600, now + 600]) {
      const res = await interact(worker, command("stale"), { timestamp });
      assertStrictEquals(res.status, 401);
      await res.body?.cancel();
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
  });
});

Deno.test("POST /webhooks/discord is refused with 403 and no turn while DISCORD_PUBLIC_KEY is unset", async () => {
  await withPlatform({ ...VARS, DISCORD_PUBLIC_KEY: "" }, async (worker, fake, discord) => {
    const res = await interact(worker, command("nobody home"));
    assertStrictEquals(res.status, 403);
    const body = await json(res);
    assertStrictEquals(body.error.type, "not_configured");
    assert(body.error.message.includes("DISCORD_PUBLIC_KEY"));
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
  });
});

Deno.test("POST /webhooks/discord runs a replayed interaction id once and replies once", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const payload = command("only once");
    assertEquals(await json(await interact(worker, payload)), { type: 5 });
    await discord.waitForCalls(1);
    const again = await interact(worker, payload);
    await expectOk(again, { type: 5 });
    await pause(300);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(discord.calls.length, 1);
  });
});

Deno.test("POST /webhooks/discord acknowledges while the model call is still running", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    fake.script(() => ({ kind: "hold" }));
    const payload = command("slow answer");
    const res = await interact(worker, payload);
    await fake.waitForRequests(1);
    await expectOk(res, { type: 5 });
    assertStrictEquals(fake.inFlight, 1);
    assertStrictEquals(discord.calls.length, 0);
    fake.release();
    await discord.waitForCalls(1);
    assertStrictEquals(discord.calls[0].path, editPath(payload.token));
    assertStrictEquals(discord.calls[0].body.content, "slow answer");
  });
});

Deno.test("POST /webhooks/discord runs one turn for the same interaction sent five times during a slow turn", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    fake.script(() => ({ kind: "hold" }));
    const payload = command("retry storm");
    assertStrictEquals((await interact(worker, payload)).status, 200);
    await fake.waitForRequests(1);
    const retries = await Promise.all(Array.from({ length: 5 }, () => interact(worker, payload)));
    for (const res of retries) {
      await expectOk(res, { type: 5 });
    }
    fake.release();
    await discord.waitForCalls(1);
    await pause(300);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(discord.calls.length, 1);
  });
});

Deno.test("POST /webhooks/discord runs two commands in one channel as two turns in order", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    fake.script(holdOn("first"));
    const first = command("first");
    const second = command("second");
    assertStrictEquals((await interact(worker, first)).status, 200);
    await fake.waitForRequests(1);
    assertStrictEquals((await interact(worker, second)).status, 200);
    await untilQueued(worker, `discord:${CHANNEL}`, 1);
    await discord.waitForCalls(1); // the queued notice to the second message's sender
    fake.release();
    await discord.waitForCalls(3);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second"]);
    assertEquals(discord.calls.map((c) => [c.method, c.path, c.body.content]), [
      ["PATCH", editPath(second.token), "Queued — I'll answer after the current reply."],
      ["PATCH", editPath(first.token), "first"],
      ["PATCH", editPath(second.token), "second"],
    ]);
  });
});

Deno.test("POST /webhooks/discord sends a long reply as ordered parts within 2000 characters", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const words = Array.from({ length: 1800 }, (_, i) => `word${i}`);
    const long = words.join(" ") + "\n\n" + "y".repeat(4500);
    fake.script(() => ({ kind: "text", text: long }));
    const payload = command("write a lot");
    assertStrictEquals((await interact(worker, payload)).status, 200);
    const parts = Math.ceil(long.length / 2000);
    await discord.waitForCalls(parts);
    await settled(worker, `discord:${CHANNEL}`);
    const calls = discord.calls;
    assert(calls.length >= parts);
    assertEquals(calls[0].method, "PATCH");
    assertEquals(calls[0].path, editPath(payload.token));
    for (const call of calls.slice(1)) {
      assertEquals([call.method, call.path], ["POST", `/webhooks/${APP_ID}/${payload.token}`]);
    }
    for (const call of calls) assert(call.body.content.length <= 2000);
    assertStrictEquals(calls.map((c) => c.body.content).join(""), long);
  });
});

Deno.test("POST /webhooks/discord waits out a 429 retry_after and then delivers exactly once", async () => {
  await withPlatform(VARS, async (worker, _fake, discord) => {
    const at: number[] = [];
    discord.respond((_call, index) => {
      at.push(Date.now());
      return index === 0
        ? {
          status: 429,
          body: { message: "You are being rate limited.", retry_after: 1, global: false },
          headers: { "x-ratelimit-scope": "user" },
        }
        : { status: 200, body: { id: "m1" } };
    });
    const payload = command("rate limited");
    assertStrictEquals((await interact(worker, payload)).status, 200);
    await discord.waitForCalls(2);
    await pause(300);
    assertStrictEquals(discord.calls.length, 2);
    for (const call of discord.calls) {
      assertEquals([call.method, call.path], ["PATCH", editPath(payload.token)]);
      assertStrictEquals(call.body.content, "rate limited");
    }
    assert(at[1] - at[0] >= 950, `waited ${at[1] - at[0]} ms`);
  });
});

Deno.test("POST /webhooks/discord ignores components, modals, autocomplete and text-less commands", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    const base = { application_id: APP_ID, channel_id: CHANNEL, token: "t" };
    const cases: [unknown, unknown][] = [
      [{ ...base, id: "2001", type: 3, data: { custom_id: "b", component_type: 2 } }, { type: 6 }],
      [{ ...base, id: "2002", type: 5, data: { custom_id: "m", components: [] } }, { type: 6 }],
      [
        { ...base, id: "2003", type: 4, data: { name: "ask", options: [] } },
        { type: 8, data: { choices: [] } },
      ],
      [command(null), {
        type: 4,
        data: { content: "This command needs a text option.", flags: 64 },
      }],
      [
        { version: 1, application_id: APP_ID, type: 1, event: { type: "APPLICATION_AUTHORIZED" } },
        {},
      ],
    ];
    for (const [payload, expected] of cases) {
      const res = await interact(worker, payload);
      await expectOk(res, expected);
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
    assertStrictEquals((await sessionState(worker, `discord:${CHANNEL}`)).messages.length, 0);
  });
});

Deno.test("POST /webhooks/discord binds the interaction's context (session_info)", async () => {
  await withPlatform(VARS, async (worker, fake, discord) => {
    fake.script(echoSessionInfo());
    const payload = command("who am i");
    assertStrictEquals((await interact(worker, payload)).status, 200);
    await discord.waitForCalls(1);
    assertEquals(JSON.parse(discord.calls[0].body.content), {
      platform: "discord",
      chat_id: CHANNEL,
      thread_id: "",
      user_id: "1500000000000000001",
      user_name: "Ada L.",
      session_key: `discord:${CHANNEL}`,
      message_id: payload.id,
      async_delivery: false,
    });
  });
});

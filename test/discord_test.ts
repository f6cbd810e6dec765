// POST /webhooks/discord end to end: Ed25519-signed interactions into baton in one workerd for the file, replies to a fake Discord API; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sessionState, untilQueued } from "./_support/clients.ts";
import { discordTestKeys, signDiscordRequest } from "./_support/discord_signer.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const APP_ID = "1100000000000000001";

const keys = await discordTestKeys();
const PUBLIC_KEY = keys.publicKeyHex;
const VARS = { DISCORD_PUBLIC_KEY: PUBLIC_KEY, DISCORD_APPLICATION_ID: APP_ID };

// One Worker for the file: each test uses a channel and a user of its own (see where).
const baton = sharedBaton({ vars: VARS });

/** A channel and a member of one test: snowflakes no other test of the file uses. */
function where(n: number): { channel: string; user: string } {
  return {
    channel: String(1300000000000000000n + BigInt(n)),
    user: String(1500000000000000000n + BigInt(n)),
  };
}

let _ids = 0;

/** A slash command interaction (`/ask prompt:<text>`) by `at.user` in `at.channel`. */
function command(
  text: string | null,
  at: { channel: string; user: string },
  extra: Record<string, unknown> = {},
) {
  const id = `12000000000${String(++_ids).padStart(8, "0")}`;
  return {
    id,
    type: 2,
    application_id: APP_ID,
    token: `token-${id}`,
    channel_id: at.channel,
    channel: { id: at.channel, name: "general", type: 0 },
    guild_id: "1400000000000000001",
    member: {
      user: { id: at.user, username: "ada", global_name: "Ada L." },
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

baton.test(
  "POST /webhooks/discord answers a signed PING with PONG and no turn",
  async (worker, fake, discord) => {
    const ping = { id: "1", type: 1, application_id: APP_ID, token: "ping-token", version: 1 };
    const res = await interact(worker, ping);
    await expectOk(res, { type: 1 });
    const unsigned = await interact(worker, ping, { signature: "00".repeat(64) });
    assertStrictEquals(unsigned.status, 401);
    await unsigned.body?.cancel();
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
  },
);

baton.test(
  "POST /webhooks/discord refuses a timestamp more than 5 minutes off with 401",
  async (worker, fake) => {
    const at = where(2);
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 600, now + 600]) {
      const res = await interact(worker, command("stale", at), { timestamp });
      assertStrictEquals(res.status, 401);
      await res.body?.cancel();
    }
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /webhooks/discord runs two commands in one channel as two turns in order",
  async (worker, fake, discord) => {
    const at = where(3);
    fake.script(holdOn("first"));
    const first = command("first", at);
    const second = command("second", at);
    assertStrictEquals((await interact(worker, first)).status, 200);
    await fake.waitForRequests(1);
    assertStrictEquals((await interact(worker, second)).status, 200);
    await untilQueued(worker, `discord:${at.channel}`, 1);
    await discord.waitForCalls(1); // the queued notice to the second message's sender
    fake.release();
    await discord.waitForCalls(3);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second"]);
    assertEquals(discord.calls.map((c) => [c.method, c.path, c.body.content]), [
      ["PATCH", editPath(second.token), "Queued — I'll answer after the current reply."],
      ["PATCH", editPath(first.token), "first"],
      ["PATCH", editPath(second.token), "second"],
    ]);
  },
);

baton.test(
  "POST /webhooks/discord ignores components, modals, autocomplete and text-less commands, and answers an app webhook event 204",
  async (worker, fake, discord) => {
    const at = where(4);
    const base = { application_id: APP_ID, channel_id: at.channel, token: "t" };
    const cases: [unknown, unknown][] = [
      [{ ...base, id: "2001", type: 3, data: { custom_id: "b", component_type: 2 } }, { type: 6 }],
      [{ ...base, id: "2002", type: 5, data: { custom_id: "m", components: [] } }, { type: 6 }],
      [
        { ...base, id: "2003", type: 4, data: { name: "ask", options: [] } },
        { type: 8, data: { choices: [] } },
      ],
      [command(null, at), {
        type: 4,
        data: { content: "This command needs a text option.", flags: 64 },
      }],
    ];
    for (const [payload, expected] of cases) {
      const res = await interact(worker, payload);
      await expectOk(res, expected);
    }
    // An app-level Webhook Event is acknowledged as Discord asks: 204, no body.
    const event = {
      version: 1,
      application_id: APP_ID,
      type: 1,
      event: { type: "APPLICATION_AUTHORIZED" },
    };
    const acked = await interact(worker, event);
    assertStrictEquals(acked.status, 204);
    assertStrictEquals(await acked.text(), "");
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
    assertStrictEquals((await sessionState(worker, `discord:${at.channel}`)).messages.length, 0);
  },
);

baton.done();

// POST /webhooks/discord end to end: Ed25519-signed interactions into baton in one workerd for the file, replies to a fake Discord API; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sessionState, untilQueued } from "./_support/clients.ts";
import { DISCORD_APP_ID as APP_ID, discordDriver as driver } from "./_support/drivers/discord.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file: each test uses a channel and a user of its own (see where).
const baton = sharedBaton({ vars: driver.vars() });

/** A channel and a member of one test: snowflakes no other test of the file uses. */
function where(n: number): { channel: string; user: string } {
  return {
    channel: String(1300000000000000000n + BigInt(n)),
    user: String(1500000000000000000n + BigInt(n)),
  };
}

let _ids = 0;

/**
 * A slash command interaction (`/ask prompt:<text>`) by `at.user` in `at.channel`, as
 * discordDriver shapes it; `null` sends it without its text option.
 */
function command(text: string | null, at: { channel: string; user: string }) {
  const id = `12000000000${String(++_ids).padStart(8, "0")}`;
  const from = { id: at.user, name: "Ada L." };
  const shaped = driver.shape({ chat: at.channel, text: text ?? "", id, from }) as {
    token: string;
    data: Record<string, unknown>;
  };
  return text === null ? { ...shaped, data: { ...shaped.data, options: [] } } : shaped;
}

/**
 * POSTs `payload` signed by discordDriver (at `timestamp`); `signature` replaces the signature
 * header with one the driver would never make.
 */
async function interact(
  worker: TestWorker,
  payload: unknown,
  opts: { timestamp?: number; signature?: string } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await driver.sign(body, driver.credentials, { at: opts.timestamp });
  if (opts.signature !== undefined) headers["x-signature-ed25519"] = opts.signature;
  return worker.fetch(driver.path, { method: "POST", headers, body });
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

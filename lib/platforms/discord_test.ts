// Unit tests for lib/platforms/discord.ts over signed fixtures and a stubbed fetch; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import { type Ingress, type PlatformMessage, type RawRequest, replyChannel } from "../platform.ts";
import { DISCORD_NO_TEXT_NOTICE, discordAdapter } from "./discord.ts";

const NOW = 1_767_000_000;
const APP_ID = "1100000000000000001";
const TOKEN = "aW50ZXJhY3Rpb24tdG9rZW4tc2VjcmV0";

const keys = await discordTestKeys();
const PUBLIC_KEY = keys.publicKeyHex;
const ENV = { DISCORD_PUBLIC_KEY: PUBLIC_KEY, DISCORD_APPLICATION_ID: APP_ID };

async function signed(
  payload: unknown,
  opts: { timestamp?: string; body?: string; signature?: string; nowSeconds?: number } = {},
): Promise<RawRequest> {
  const timestamp = opts.timestamp ?? String(NOW);
  const body = new TextEncoder().encode(opts.body ?? JSON.stringify(payload));
  const signature = opts.signature ??
    await signDiscordRequest({ privateKey: keys.privateKey, timestamp, body });
  return {
    headers: new Headers({ "x-signature-ed25519": signature, "x-signature-timestamp": timestamp }),
    body,
    nowSeconds: opts.nowSeconds ?? NOW,
  };
}

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

Deno.test("discordAdapter.verify() accepts a signature over timestamp + raw body", async () => {
  assertStrictEquals(await discordAdapter.verify(await signed({ type: 1 }), ENV), null);
});

Deno.test("discordAdapter.verify() refuses a signature by another key", async () => {
  const otherKey = (await discordTestKeys()).publicKeyHex;
  const refusal = await discordAdapter.verify(await signed({ type: 1 }), {
    ...ENV,
    DISCORD_PUBLIC_KEY: otherKey,
  });
  assertStrictEquals(refusal, "X-Signature-Ed25519 does not match");
});

Deno.test("discordAdapter.verify() refuses a body changed after signing", async () => {
  const request = await signed({ type: 1 });
  const tampered = { ...request, body: new TextEncoder().encode('{"type":1 }') };
  assertStrictEquals(
    await discordAdapter.verify(tampered, ENV),
    "X-Signature-Ed25519 does not match",
  );
});

Deno.test("discordAdapter.verify() refuses a signature over a different timestamp", async () => {
  const request = await signed({ type: 1 });
  request.headers.set("x-signature-timestamp", String(NOW + 1));
  assertStrictEquals(
    await discordAdapter.verify(request, ENV),
    "X-Signature-Ed25519 does not match",
  );
});

Deno.test("discordAdapter.verify() refuses missing headers", async () => {
  const request = await signed({ type: 1 });
  for (const name of ["x-signature-ed25519", "x-signature-timestamp"]) {
    const headers = new Headers(request.headers);
    headers.delete(name);
    assertMatch(
      (await discordAdapter.verify({ ...request, headers }, ENV)) ?? "",
      /^missing X-Signature-Ed25519 or X-Signature-Timestamp header$/,
    );
  }
});

Deno.test("discordAdapter.verify() refuses malformed hex signatures", async () => {
  const good = (await signed({ type: 1 })).headers.get("x-signature-ed25519")!;
  for (const signature of ["zz" + good.slice(2), good.slice(2), good + "00", "", "0".repeat(128)]) {
    const refusal = await discordAdapter.verify(await signed({ type: 1 }, { signature }), ENV);
    assert(refusal, `refused: ${signature.slice(0, 8)}…`);
  }
});

Deno.test("discordAdapter.verify() refuses timestamps outside ±5 minutes", async () => {
  for (const skew of [-301, 301]) {
    const request = await signed({ type: 1 }, { timestamp: String(NOW + skew) });
    assertStrictEquals(
      await discordAdapter.verify(request, ENV),
      "X-Signature-Timestamp is outside ±300s of now",
    );
  }
  for (const skew of [-300, 300]) {
    const request = await signed({ type: 1 }, { timestamp: String(NOW + skew) });
    assertStrictEquals(await discordAdapter.verify(request, ENV), null);
  }
  const request = await signed({ type: 1 }, { timestamp: `${NOW}.5` });
  assertStrictEquals(
    await discordAdapter.verify(request, ENV),
    "X-Signature-Timestamp is not a number of seconds",
  );
});

Deno.test("discordAdapter.verify() refuses when DISCORD_PUBLIC_KEY is not 32 bytes of hex", async () => {
  for (const key of ["nothex", PUBLIC_KEY.slice(2), PUBLIC_KEY + "00"]) {
    const refusal = await discordAdapter.verify(await signed({ type: 1 }), {
      ...ENV,
      DISCORD_PUBLIC_KEY: key,
    });
    assertStrictEquals(refusal, "DISCORD_PUBLIC_KEY is not a 32-byte hex Ed25519 public key");
  }
});

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
        chat_id: "1300000000000000001",
        chat_name: "general",
        thread_id: "",
        user_id: "1500000000000000001",
        user_name: "Ada L.",
        message_id: "1200000000000000001",
      },
      reply: { platform: "discord", application_id: APP_ID, token: TOKEN },
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

Deno.test("discordAdapter.parse() ignores app webhook events and payloads lacking a turn's fields", async () => {
  for (
    const payload of [
      { version: 1, application_id: APP_ID, type: 0 },
      { version: 1, application_id: APP_ID, type: 1, event: { type: "APPLICATION_AUTHORIZED" } },
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
  const warn = console.warn;
  const warnings: unknown[][] = [];
  console.warn = (...args: unknown[]) => void warnings.push(args);
  let ingress: Ingress;
  try {
    ingress = await parse(command([{ name: "p", type: 3, value: "x" }], { application_id: "999" }));
  } finally {
    console.warn = warn;
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

type Call = { method: string; url: string; body: unknown; headers: Headers };

async function withFetch(
  answers: (call: Call, index: number) => Response | Promise<Response>,
  fn: (calls: Call[]) => Promise<void>,
): Promise<void> {
  const real = globalThis.fetch;
  const calls: Call[] = [];
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const call = {
      method: init?.method ?? "GET",
      url: String(input),
      body: JSON.parse(String(init?.body ?? "null")),
      headers: new Headers(init?.headers),
    };
    const index = calls.push(call) - 1;
    return await answers(call, index);
  };
  try {
    await fn(calls);
  } finally {
    globalThis.fetch = real;
  }
}

const TARGET = { platform: "discord", application_id: APP_ID, token: TOKEN } as const;
const SEND_ENV = { ...ENV, DISCORD_API_ROOT: "http://discord.test/api/" };

Deno.test("discordAdapter.send() edits @original for part 0 and posts follow-ups after", async () => {
  await withFetch(() => Response.json({ id: "m" }), async (calls) => {
    assertEquals(
      await discordAdapter.send(TARGET, "one", { index: 0, count: 2 }, SEND_ENV),
      { ok: true },
    );
    assertEquals(
      await discordAdapter.send(TARGET, "two", { index: 1, count: 2 }, SEND_ENV),
      { ok: true },
    );
    assertEquals(calls.map((c) => [c.method, c.url]), [
      ["PATCH", `http://discord.test/api/webhooks/${APP_ID}/${TOKEN}/messages/@original`],
      ["POST", `http://discord.test/api/webhooks/${APP_ID}/${TOKEN}`],
    ]);
    assertEquals(calls[0].body, { content: "one", allowed_mentions: { parse: [] } });
    assertEquals(calls[1].body, { content: "two", allowed_mentions: { parse: [] } });
    assertMatch(calls[0].headers.get("user-agent") ?? "", /^DiscordBot \(/);
  });
});

Deno.test("discordAdapter.send() defaults to the public Discord API root", async () => {
  await withFetch(() => Response.json({}), async (calls) => {
    await discordAdapter.send(TARGET, "x", { index: 0, count: 1 }, ENV);
    assertStrictEquals(
      calls[0].url,
      `https://discord.com/api/v10/webhooks/${APP_ID}/${TOKEN}/messages/@original`,
    );
  });
});

Deno.test("discordAdapter.send() reads retry_after on 429 as retryable for both kinds of part", async () => {
  await withFetch(
    () =>
      Response.json({ message: "You are being rate limited.", retry_after: 0.25, global: false }, {
        status: 429,
      }),
    async () => {
      for (const index of [0, 1]) {
        const result = await discordAdapter.send(TARGET, "x", { index, count: 2 }, SEND_ENV);
        assertEquals(result, {
          ok: false,
          status: 429,
          retryable: true,
          retryAfterMs: 250,
          message: "the Discord API answered 429",
        });
      }
    },
  );
});

Deno.test("discordAdapter.send() retries a 5xx or lost edit of @original but never a follow-up", async () => {
  await withFetch(() => new Response("oops", { status: 502 }), async () => {
    const edit = await discordAdapter.send(TARGET, "x", { index: 0, count: 2 }, SEND_ENV);
    assertStrictEquals(edit.ok === false && edit.retryable, true);
    const followUp = await discordAdapter.send(TARGET, "x", { index: 1, count: 2 }, SEND_ENV);
    assertStrictEquals(followUp.ok === false && followUp.retryable, false);
  });
  await withFetch(() => Promise.reject(new TypeError("network")), async () => {
    const edit = await discordAdapter.send(TARGET, "x", { index: 0, count: 2 }, SEND_ENV);
    assertStrictEquals(edit.ok === false && edit.retryable, true);
    const followUp = await discordAdapter.send(TARGET, "x", { index: 1, count: 2 }, SEND_ENV);
    assertStrictEquals(followUp.ok === false && followUp.retryable, false);
  });
});

Deno.test("discordAdapter.send() never retries 401/403/404 and keeps the token out of the message", async () => {
  for (const status of [401, 403, 404]) {
    await withFetch(
      () => Response.json({ message: "Invalid Webhook Token", code: 50027 }, { status }),
      async () => {
        for (const index of [0, 1]) {
          const result = await discordAdapter.send(TARGET, "x", { index, count: 2 }, SEND_ENV);
          assertStrictEquals(result.ok, false);
          if (result.ok) continue;
          assertStrictEquals(result.retryable, false);
          assertStrictEquals(result.status, status);
          assert(!result.message.includes(TOKEN));
          assert(!result.message.includes(APP_ID));
        }
      },
    );
  }
});

Deno.test("discordAdapter.send() replaces a blank first part and skips blank follow-ups", async () => {
  await withFetch(() => Response.json({}), async (calls) => {
    assertEquals(await discordAdapter.send(TARGET, "", { index: 0, count: 1 }, SEND_ENV), {
      ok: true,
    });
    assertEquals(await discordAdapter.send(TARGET, "  \n", { index: 1, count: 2 }, SEND_ENV), {
      ok: true,
    });
    assertStrictEquals(calls.length, 1);
    assertEquals(calls[0].body, { content: "(empty reply)", allowed_mentions: { parse: [] } });
  });
});

Deno.test("discordAdapter.replyTarget refuses a target without a token before any send", async () => {
  // Targets are checked once, where replies are sent: replyChannel() over the adapter's schema.
  await withFetch(() => Response.json({}), async (calls) => {
    const channel = replyChannel([discordAdapter], SEND_ENV);
    const result = await channel.send({ platform: "discord" }, "x", { index: 0, count: 1 });
    assertEquals(result.ok === false && result.retryable, false);
    assertStrictEquals(result.ok, false);
    assertStrictEquals(calls.length, 0);
  });
});

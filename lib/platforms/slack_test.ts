// Unit tests of the Slack adapter: v0 signature checks, event parsing and chat.postMessage outcomes; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { PayloadError, type PlatformMessage, type RawRequest } from "../platform.ts";
import { signSlackRequest, slackAdapter } from "./slack.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TOKEN = "xoxb-unit-test-token";
const ENV = { SLACK_SIGNING_SECRET: SECRET, SLACK_BOT_TOKEN: TOKEN };
const NOW = 1_700_000_000;
const BOT = "UBOT123";

async function signed(
  body: string,
  opts: { timestamp?: number; secret?: string; signature?: string; contentType?: string } = {},
): Promise<RawRequest> {
  const timestamp = opts.timestamp ?? NOW;
  const signature = opts.signature ??
    await signSlackRequest({ secret: opts.secret ?? SECRET, timestamp, body });
  return {
    headers: new Headers({
      "content-type": opts.contentType ?? "application/json",
      "x-slack-signature": signature,
      "x-slack-request-timestamp": String(timestamp),
    }),
    body: new TextEncoder().encode(body),
    nowSeconds: NOW,
  };
}

function callback(event: Record<string, unknown>): string {
  return JSON.stringify({
    token: "legacy",
    team_id: "T1",
    api_app_id: "A1",
    type: "event_callback",
    event_id: `Ev${crypto.randomUUID()}`,
    event_time: NOW,
    authorizations: [{ team_id: "T1", user_id: BOT, is_bot: true }],
    event,
  });
}

const mention = (extra: Record<string, unknown> = {}) => ({
  type: "app_mention",
  user: "U1",
  text: `<@${BOT}> hello there`,
  ts: "1700000000.000100",
  channel: "C1",
  event_ts: "1700000000.000100",
  ...extra,
});

const dm = (extra: Record<string, unknown> = {}) => ({
  type: "message",
  user: "U1",
  text: "hi in private",
  ts: "1700000000.000200",
  channel: "D1",
  channel_type: "im",
  ...extra,
});

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

Deno.test("slackAdapter.verify() accepts a correct v0 signature over the raw body", async () => {
  assertStrictEquals(await slackAdapter.verify(await signed(callback(mention())), ENV), null);
});

Deno.test("slackAdapter.verify() accepts timestamps just inside ±5 minutes", async () => {
  for (const timestamp of [NOW - 300, NOW + 300]) {
    assertStrictEquals(await slackAdapter.verify(await signed("{}", { timestamp }), ENV), null);
  }
});

Deno.test("slackAdapter.verify() refuses a signature made with another secret", async () => {
  const refusal = await slackAdapter.verify(await signed("{}", { secret: "other" }), ENV);
  assertEquals(refusal, "X-Slack-Signature does not match the request");
});

Deno.test("slackAdapter.verify() refuses a body changed after signing", async () => {
  const request = await signed('{"type":"event_callback"}');
  request.body = new TextEncoder().encode('{"type":"event_callback" }');
  assertEquals(
    await slackAdapter.verify(request, ENV),
    "X-Slack-Signature does not match the request",
  );
});

Deno.test("slackAdapter.verify() refuses stale and future timestamps", async () => {
  for (const timestamp of [NOW - 301, NOW + 301, NOW - 86_400]) {
    const refusal = await slackAdapter.verify(await signed("{}", { timestamp }), ENV);
    assertEquals(refusal, "X-Slack-Request-Timestamp is outside ±300s of now");
  }
});

Deno.test("slackAdapter.verify() refuses a malformed signature or timestamp", async () => {
  const good = await signSlackRequest({ secret: SECRET, timestamp: NOW, body: "{}" });
  for (
    const signature of [
      good.slice(3),
      "v1=" + good.slice(3),
      good.slice(0, -1),
      good.slice(0, -2) + "zz",
      "v0=",
      "v0=" + good.slice(3).toUpperCase().replace(/^./, "G"),
    ]
  ) {
    const refusal = await slackAdapter.verify(await signed("{}", { signature }), ENV);
    assertEquals(refusal, "X-Slack-Signature is not of the form v0=<hex>", signature);
  }
  const request = await signed("{}");
  request.headers.set("x-slack-request-timestamp", "17e8");
  assertEquals(
    await slackAdapter.verify(request, ENV),
    "X-Slack-Request-Timestamp is not an integer number of seconds",
  );
});

Deno.test("slackAdapter.verify() accepts upper-case hex of the right signature", async () => {
  const good = await signSlackRequest({ secret: SECRET, timestamp: NOW, body: "{}" });
  const signature = "v0=" + good.slice(3).toUpperCase();
  assertStrictEquals(await slackAdapter.verify(await signed("{}", { signature }), ENV), null);
});

Deno.test("slackAdapter.verify() refuses a request without the signature headers", async () => {
  for (const name of ["x-slack-signature", "x-slack-request-timestamp"]) {
    const request = await signed("{}");
    request.headers.delete(name);
    assertEquals(
      await slackAdapter.verify(request, ENV),
      "missing X-Slack-Signature or X-Slack-Request-Timestamp header",
    );
  }
});

Deno.test("slackAdapter.verify() never puts the signing secret in a refusal", async () => {
  const refusals = [
    await slackAdapter.verify(await signed("{}", { secret: "x" }), ENV),
    await slackAdapter.verify(await signed("{}", { timestamp: 0 }), ENV),
    await slackAdapter.verify(await signed("{}", { signature: "v0=zz" }), ENV),
  ];
  for (const refusal of refusals) assert(refusal && !refusal.includes(SECRET), String(refusal));
});

Deno.test("slackAdapter verify() and parse() answer an ssl_check form probe with 200 {} and no turn", async () => {
  const request: RawRequest = {
    headers: new Headers({ "content-type": "application/x-www-form-urlencoded" }),
    body: new TextEncoder().encode("ssl_check=1&token=legacy"),
    nowSeconds: NOW,
  };
  assertStrictEquals(await slackAdapter.verify(request, ENV), null);
  assertEquals(slackAdapter.parse(request, ENV), { kind: "respond", status: 200, body: {} });
});

Deno.test("slackAdapter.verify() still checks the signature of a JSON body that says ssl_check", async () => {
  const request = await signed('{"ssl_check":"1"}', { secret: "wrong" });
  assert(await slackAdapter.verify(request, ENV));
});

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
      chat_id: "C1",
      chat_name: "",
      thread_id: "1700000000.000100",
      user_id: "U1",
      user_name: "U1",
      message_id: "1700000000.000100",
    },
    reply: { platform: "slack", channel: "C1", thread_ts: "1700000000.000100" },
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
      chat_id: "D1",
      chat_name: "",
      thread_id: "",
      user_id: "U1",
      user_name: "U1",
      message_id: "1700000000.000200",
    },
    reply: { platform: "slack", channel: "D1" },
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
    dm({ subtype: "file_share", files: [{}] }),
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

async function withFetch(
  answer: (req: Request) => Response | Promise<Response>,
  fn: (requests: { url: string; headers: Headers; body: unknown }[]) => Promise<void>,
): Promise<void> {
  const original = globalThis.fetch;
  const requests: { url: string; headers: Headers; body: unknown }[] = [];
  globalThis.fetch = async (input, init) => {
    const req = new Request(input, init);
    requests.push({ url: req.url, headers: req.headers, body: await req.clone().json() });
    return answer(req);
  };
  try {
    await fn(requests);
  } finally {
    globalThis.fetch = original;
  }
}

const PART = { index: 0, count: 1 };

Deno.test("slackAdapter.send() posts to chat.postMessage with the bot token, threaded when the target has a thread", async () => {
  await withFetch(() => Response.json({ ok: true, ts: "1.2" }), async (requests) => {
    const env = { ...ENV, SLACK_API_ROOT: "http://slack.test/api/" };
    const threaded = { platform: "slack", channel: "C1", thread_ts: "1.1" } as const;
    assertEquals(await slackAdapter.send(threaded, "hello", PART, env), { ok: true });
    assertEquals(await slackAdapter.send({ platform: "slack", channel: "D1" }, "dm", PART, env), {
      ok: true,
    });
    assertEquals(requests.map((r) => r.url), [
      "http://slack.test/api/chat.postMessage",
      "http://slack.test/api/chat.postMessage",
    ]);
    assertEquals(requests[0].headers.get("authorization"), `Bearer ${TOKEN}`);
    assertEquals(requests[0].body, { channel: "C1", text: "hello", thread_ts: "1.1" });
    assertEquals(requests[1].body, { channel: "D1", text: "dm" });
  });
});

Deno.test("slackAdapter.send() defaults to https://slack.com/api", async () => {
  await withFetch(() => Response.json({ ok: true }), async (requests) => {
    await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(requests[0].url, "https://slack.com/api/chat.postMessage");
  });
});

Deno.test("slackAdapter.send() treats HTTP 200 ok:false as a final failure naming the error code", async () => {
  await withFetch(() => Response.json({ ok: false, error: "channel_not_found" }), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(result, {
      ok: false,
      status: 200,
      retryable: false,
      message: "Slack chat.postMessage failed: channel_not_found",
    });
  });
  await withFetch(() => new Response("<html>oops</html>"), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assert(!result.ok && result.message === "Slack chat.postMessage failed: unknown_error");
  });
});

Deno.test("slackAdapter.send() makes a 429 retryable after Retry-After seconds", async () => {
  await withFetch(
    () =>
      Response.json({ ok: false, error: "ratelimited" }, {
        status: 429,
        headers: { "retry-after": "3" },
      }),
    async () => {
      const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
      assertEquals(result, {
        ok: false,
        status: 429,
        retryable: true,
        retryAfterMs: 3000,
        message: "Slack chat.postMessage answered HTTP 429",
      });
    },
  );
});

Deno.test("slackAdapter.send() does not retry a 5xx or a network error, and never shows the token", async () => {
  await withFetch(() => new Response("bad gateway", { status: 502 }), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assert(!result.ok && !result.retryable && result.status === 502);
    assert(!JSON.stringify(result).includes(TOKEN));
  });
  await withFetch(() => {
    throw new TypeError(`connect failed with ${TOKEN}`);
  }, async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(result, {
      ok: false,
      status: 0,
      retryable: false,
      message: "could not reach the Slack API",
    });
  });
});

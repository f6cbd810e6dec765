// Unit tests for lib/platforms/line.ts: x-line-signature, webhook event parsing and push sends with retry keys over a stubbed fetch; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals, assertThrows } from "@std/assert";
import { PayloadError, type RawRequest, replyChannel } from "../chat/mod.ts";
import { lineAdapter, type LineTarget, signLinePayload } from "./line.ts";
import { lineRetryKey } from "./line_push.ts";
import { withFetch } from "./_fetch_stub.ts";
import { setLogSink } from "../runtime/mod.ts";
import { DEDUP_MS } from "../session/inbox.ts";
import { approvalButtons } from "../session/approval_buttons.ts";

const SECRET = "line-channel-secret-0123456789ab";
const TOKEN = "line-channel-access-token-value";
const ENV = {
  LINE_CHANNEL_SECRET: SECRET,
  LINE_CHANNEL_ACCESS_TOKEN: TOKEN,
  LINE_API_ROOT: "http://line.test/",
};
const USER = "U4af4980629d6f5ad8b9f0a8b3a5cf1e2";
const GROUP = "Ca56f94637c3f7b6c0e3b9d1f0e0a0b0c";
const TARGET: LineTarget = { platform: "line", to: USER };
const PART = { index: 0, count: 1, marker: "o7-lz0abc" };

/** The Messaging API reference's sample event time (ms), and "now" in these tests: a second later. */
const SAMPLE_MS = 1_692_251_666_727;
const NOW_S = Math.floor(SAMPLE_MS / 1000) + 1;

let _next = 0;

/** A text `message` event as the Messaging API documents it (a 1:1 chat unless `source` is given). */
export function lineText(
  text: string,
  opts: {
    id?: string;
    redelivery?: boolean;
    source?: unknown;
    mention?: unknown;
    timestamp?: number;
  } = {},
): Record<string, unknown> {
  _next++;
  return {
    type: "message",
    mode: "active",
    timestamp: opts.timestamp ?? SAMPLE_MS,
    webhookEventId: opts.id ?? `01H810YECXQQZ37VAXPF6H9E${String(_next).padStart(2, "0")}`,
    deliveryContext: { isRedelivery: opts.redelivery ?? false },
    source: opts.source ?? { type: "user", userId: USER },
    replyToken: "38ef843bde154d9b91c21320ffd17a0f",
    message: {
      type: "text",
      id: `46878957789826${String(_next).padStart(4, "0")}`,
      quoteToken: "q3Plxr4AgKd",
      text,
      ...(opts.mention ? { mention: opts.mention } : {}),
    },
  };
}

/** The lines `fn` logs. */
async function captureLog(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const restore = setLogSink((_level, line) => lines.push(line));
  try {
    await fn();
  } finally {
    restore();
  }
  return lines;
}

function raw(body: string, headers: Record<string, string> = {}): RawRequest {
  return {
    headers: new Headers({ "content-type": "application/json", ...headers }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/line",
    nowSeconds: NOW_S,
  };
}

async function signed(events: unknown[]): Promise<RawRequest> {
  const body = JSON.stringify({ destination: "Uxxxxxxxx", events });
  return raw(body, { "x-line-signature": await signLinePayload(SECRET, body) });
}

Deno.test("lineAdapter.verify() accepts x-line-signature, base64 HMAC-SHA256 of the exact body", async () => {
  assertStrictEquals(await lineAdapter.verify(await signed([lineText("hi")]), ENV), null);
});

Deno.test("lineAdapter.verify() refuses a missing, malformed, wrong-key or other-body signature without naming the secret", async () => {
  const body = JSON.stringify({ destination: "U1", events: [lineText("hi")] });
  const good = await signLinePayload(SECRET, body);
  const cases: Record<string, string>[] = [
    {},
    { "x-line-signature": "" },
    { "x-line-signature": good.slice(0, -4) },
    { "x-line-signature": "%%%" + good.slice(3) },
    { "x-line-signature": await signLinePayload("other-secret", body) },
    { "x-line-signature": await signLinePayload(SECRET, body + "\n") },
  ];
  for (const headers of cases) {
    const refusal = await lineAdapter.verify(raw(body, headers), ENV);
    assert(typeof refusal === "string", JSON.stringify(headers));
    assert(!refusal.includes(SECRET));
  }
});

Deno.test("lineAdapter.parse() turns a 1:1 text message into a turn keyed by webhookEventId", async () => {
  const event = lineText("hello bot", { id: "01H810YECXQQZ37VAXPF6H9E6T" });
  const ingress = lineAdapter.parse(await signed([event]), ENV);
  assertEquals(ingress, {
    kind: "message",
    message: {
      sessionKey: `line:user:${USER}`,
      deliveryKey: "line:01H810YECXQQZ37VAXPF6H9E6T",
      text: "hello bot",
      context: {
        platform: "line",
        session_key: `line:user:${USER}`,
        chat_id: USER,
        chat_name: "",
        thread_id: "",
        user_id: USER,
        user_name: USER,
        message_id: (event.message as { id: string }).id,
      },
      reply: { platform: "line", to: USER },
      sender: { platform: "line", user: USER, name: USER, direct: true },
    },
  });
});

Deno.test("lineAdapter.parse() gives a redelivered event the same delivery key as the first", async () => {
  const first = lineText("again", { id: "01HREDELIVERY000000000000A" });
  const redelivered = { ...first, deliveryContext: { isRedelivery: true } };
  const a = lineAdapter.parse(await signed([first]), ENV);
  const b = lineAdapter.parse(await signed([redelivered]), ENV);
  assert(a.kind === "message" && b.kind === "message");
  assertStrictEquals(a.message.deliveryKey, b.message.deliveryKey);
});

Deno.test("lineAdapter.parse() keeps the text events of one delivery in order", async () => {
  const ingress = lineAdapter.parse(
    await signed([lineText("one"), { type: "follow", webhookEventId: "x" }, lineText("two")]),
    ENV,
  );
  assert(ingress.kind === "messages");
  assertEquals(ingress.messages.map((m) => m.text), ["one", "two"]);
});

Deno.test("lineAdapter.parse() answers a group message only when it mentions the bot or is a command", async () => {
  const source = { type: "group", groupId: GROUP, userId: USER };
  const mentioned = lineText("@baton what time is it", {
    source,
    mention: {
      mentionees: [{ index: 0, length: 6, type: "user", userId: "Ubot", isSelf: true }],
    },
  });
  const other = lineText("@alice hi", {
    source,
    mention: { mentionees: [{ index: 0, length: 6, type: "user", userId: "Ualice" }] },
  });
  const ingress = lineAdapter.parse(
    await signed([
      lineText("chatter", { source }),
      other,
      mentioned,
      lineText("/approve", { source }),
    ]),
    ENV,
  );
  assert(ingress.kind === "messages");
  assertEquals(ingress.messages.map((m) => [m.text, m.sessionKey, m.sender.direct, m.reply.to]), [
    ["what time is it", `line:group:${GROUP}`, false, GROUP],
    ["/approve", `line:group:${GROUP}`, false, GROUP],
  ]);
});

Deno.test("lineAdapter.parse() acknowledges the console's verify, stickers, follows, standby and unknown users with no turn", async () => {
  const ignored: unknown[][] = [
    [],
    [{ ...lineText("x"), message: { type: "sticker", id: "1", packageId: "1", stickerId: "1" } }],
    [{ type: "follow", webhookEventId: "01F", source: { type: "user", userId: USER } }],
    [{ ...lineText("standby"), mode: "standby" }],
    [lineText("no user", { source: { type: "group", groupId: GROUP } })],
    [lineText("   ")],
  ];
  for (const events of ignored) {
    assertStrictEquals(
      lineAdapter.parse(await signed(events), ENV).kind,
      "respond",
      JSON.stringify(events),
    );
  }
  assert(assertThrows(() => lineAdapter.parse(raw("{no"), ENV)) instanceof PayloadError);
});

Deno.test("lineAdapter.parse() refuses an event older than the inbox remembers: acknowledged, logged, no turn", async () => {
  // LINE signs the body only, with no delivery time: a captured delivery verifies for ever. Its
  // events' own signed timestamps age it; an event the inbox's dedup may have forgotten (older
  // than DEDUP_MS, 24 h) must not run again.
  const nowMs = NOW_S * 1000;
  const at = (ageMs: number) => lineText(`aged ${ageMs}`, { timestamp: nowMs - ageMs });
  const logged = await captureLog(async () => {
    for (const ageMs of [DEDUP_MS, 7 * DEDUP_MS, 365 * DEDUP_MS]) {
      const ingress = lineAdapter.parse(await signed([at(ageMs)]), ENV);
      assertStrictEquals(ingress.kind, "respond", `${ageMs} ms old`);
    }
  });
  assertStrictEquals(logged.filter((l) => l.includes("older than")).length, 3, logged.join("\n"));
  // A postback of baton's own buttons ages the same way.
  const click = {
    type: "postback",
    mode: "active",
    timestamp: nowMs - DEDUP_MS,
    webhookEventId: "01HOLDCLICK000000000000000",
    deliveryContext: { isRedelivery: false },
    source: { type: "user", userId: USER },
    postback: { data: approvalButtons(7, "call_old")[0].data },
  };
  assertStrictEquals(lineAdapter.parse(await signed([click]), ENV).kind, "respond");
  assertStrictEquals(
    lineAdapter.parse(await signed([{ ...click, timestamp: nowMs }]), ENV).kind,
    "choice",
  );
  // Fresh, hours late (a redelivery), or stamped ahead of this clock: it runs.
  for (const ageMs of [0, 60 * 60_000, 22 * 60 * 60_000, -60_000]) {
    assertStrictEquals(lineAdapter.parse(await signed([at(ageMs)]), ENV).kind, "message");
  }
  // In one delivery, only the old event is dropped.
  const mixed = lineAdapter.parse(await signed([at(DEDUP_MS), at(1000)]), ENV);
  assert(mixed.kind === "message");
  assertStrictEquals(mixed.message.text, "aged 1000");
});

Deno.test("lineAdapter.send() pushes to /v2/bot/message/push with a retry key drawn from the part", async () => {
  await withFetch(
    () => Response.json({ sentMessages: [{ id: "1", quoteToken: "q" }] }),
    async (calls) => {
      assertEquals(await lineAdapter.send(TARGET, "hello", PART, ENV), { ok: true });
      assertEquals(await lineAdapter.send(TARGET, "hello", PART, ENV), { ok: true });
      assertStrictEquals(calls[0].url, "http://line.test/v2/bot/message/push");
      assertStrictEquals(calls[0].headers.get("authorization"), `Bearer ${TOKEN}`);
      assertEquals(calls[0].body, { to: USER, messages: [{ type: "text", text: "hello" }] });
      const key = calls[0].headers.get("x-line-retry-key")!;
      assertMatch(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assertStrictEquals(
        calls[1].headers.get("x-line-retry-key"),
        key,
        "the same part, the same key",
      );
    },
  );
  assert(
    (await lineRetryKey(USER, "o1-a")) !== (await lineRetryKey(USER, "o2-a")),
    "parts differ",
  );
  assert(
    (await lineRetryKey(USER, "o1-a")) !== (await lineRetryKey(GROUP, "o1-a")),
    "chats differ",
  );
});

Deno.test("lineAdapter.send() counts a 409 to its retry key as sent, and retries a 5xx or a lost answer", async () => {
  await withFetch(
    () => Response.json({ message: "The retry key is already accepted" }, { status: 409 }),
    async () => assertEquals(await lineAdapter.send(TARGET, "x", PART, ENV), { ok: true }),
  );
  await withFetch(() => new Response("", { status: 500 }), async () => {
    const result = await lineAdapter.send(TARGET, "x", PART, ENV);
    assert(!result.ok && result.retryable && !result.uncertain, JSON.stringify(result));
  });
  await withFetch(() => {
    throw new TypeError("connection reset");
  }, async () => {
    const result = await lineAdapter.send(TARGET, "x", PART, ENV);
    assert(!result.ok && result.retryable && !result.uncertain, JSON.stringify(result));
  });
  assertStrictEquals(lineAdapter.idempotentPart?.(3), true);
  const channel = replyChannel([lineAdapter], ENV);
  assertStrictEquals(await channel.inDoubt(TARGET, { index: 0, marker: "o1-a" }, 0), "resend");
});

Deno.test("lineAdapter.send() waits out a 429, but not the monthly quota, and never shows the token", async () => {
  await withFetch(
    () => Response.json({ message: "Too Many Requests" }, { status: 429 }),
    async () => {
      const result = await lineAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && result.retryable && result.retryAfterMs === 1000);
    },
  );
  await withFetch(
    () => Response.json({ message: "You have reached your monthly limit." }, { status: 429 }),
    async () => {
      const result = await lineAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && !result.retryable && result.message.includes("monthly limit"));
    },
  );
  await withFetch(
    () => Response.json({ message: `Authentication failed ${TOKEN}` }, { status: 401 }),
    async () => {
      const result = await lineAdapter.send(TARGET, "x", PART, ENV);
      assert(!result.ok && !result.retryable && !result.message.includes(TOKEN));
    },
  );
});

// Unit tests for lib/platforms/google_chat.ts: Chat's JWT verification (project number and URL audiences), MESSAGE event parsing and Chat API sends as the service account over a stubbed fetch; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals, assertThrows } from "@std/assert";
import { jwtVerify } from "jose";
import { PayloadError, type RawRequest, replyChannel } from "../chat/mod.ts";
import {
  GOOGLE_CHAT_ISSUER,
  googleChatAdapter,
  googleChatMessageId,
  type GoogleChatTarget,
} from "./google_chat.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { signTestJwt, testServiceAccount, testSigningKey } from "./_jwt_fixtures.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";

const PROJECT = "123456789012";
const JWKS = "http://keys.chat.test/jwk";
const TOKEN_URL = "http://oauth2.chat.test/token";
const ROOT = "http://chat.test/v1";
const NOW = Math.floor(Date.now() / 1000);
const KEY = await testSigningKey("chat-key-1");
const OTHER = await testSigningKey("chat-key-1");
const ACCOUNT = await testServiceAccount();
const ENV = {
  GOOGLE_CHAT_AUDIENCE: PROJECT,
  GOOGLE_CHAT_SERVICE_ACCOUNT: ACCOUNT.json,
  GOOGLE_CHAT_JWKS_URL: JWKS,
  GOOGLE_CHAT_TOKEN_URL: TOKEN_URL,
  GOOGLE_CHAT_API_ROOT: ROOT + "/",
};
const PART = { index: 0, count: 1, marker: "o12-part" };

/** Answers the key set, the token endpoint and (200) the Chat API. */
function platform(chat?: (call: FetchCall, index: number) => Response) {
  let sends = 0;
  return (call: FetchCall): Response => {
    if (call.url === JWKS) return Response.json({ keys: [KEY.jwk] });
    if (call.url === TOKEN_URL) {
      return Response.json({
        access_token: "ya29.chat-token",
        expires_in: 3599,
        token_type: "Bearer",
      });
    }
    return chat?.(call, sends++) ?? Response.json({ name: "spaces/AAA/messages/r1" });
  };
}

/** A MESSAGE event as an HTTP Chat app receives it: a DM, or (`room`) a mention in a space's thread. */
export function chatMessage(
  text: string,
  opts: { room?: boolean; id?: string; argumentText?: string } = {},
) {
  const space = opts.room ? "spaces/AAAAroom01" : "spaces/AAAAdm0001";
  return {
    type: "MESSAGE",
    eventTime: "2026-11-23T08:00:00.000000Z",
    space: opts.room
      ? { name: space, type: "ROOM", spaceType: "SPACE", displayName: "Team room" }
      : { name: space, type: "DM", spaceType: "DIRECT_MESSAGE", singleUserBotDm: true },
    message: {
      name: `${space}/messages/${opts.id ?? "msg0001.msg0001"}`,
      sender: { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" },
      text,
      argumentText: opts.argumentText ?? text,
      thread: { name: `${space}/threads/thr0001` },
      space: { name: space },
    },
    user: {
      name: "users/1111",
      displayName: "Grace Hopper",
      type: "HUMAN",
      email: "grace@example.com",
    },
  };
}

function request(event: unknown, token: string | null): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    }),
    body: new TextEncoder().encode(JSON.stringify(event)),
    url: "https://baton.test/webhooks/google-chat",
    nowSeconds: NOW,
  };
}

function token(opts: Partial<Parameters<typeof signTestJwt>[1]> & { key?: typeof KEY } = {}) {
  return signTestJwt(opts.key ?? KEY, {
    issuer: GOOGLE_CHAT_ISSUER,
    audience: PROJECT,
    now: NOW,
    ...opts,
  });
}

Deno.test("googleChatAdapter.verify() accepts Chat's JWT for the project number, keys fetched once", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    assertStrictEquals(
      await googleChatAdapter.verify(request(chatMessage("hi"), await token()), ENV),
      null,
    );
    assertStrictEquals(
      await googleChatAdapter.verify(request(chatMessage("hi"), await token()), ENV),
      null,
    );
    assertEquals(calls.map((c) => c.url), [JWKS]);
  });
});

Deno.test("googleChatAdapter.verify() refuses a missing, foreign, wrong-audience, expired or badly signed token", async () => {
  resetJwtCaches();
  await withFetch(platform(), async () => {
    const cases: [string, string | null][] = [
      ["no token", null],
      ["garbage", "a.b.c"],
      ["wrong audience", await token({ audience: "999999999999" })],
      ["wrong issuer", await token({ issuer: "someone@else.iam.gserviceaccount.com" })],
      ["expired", await token({ lifetime: -600 })],
      ["another key, same kid", await token({ key: OTHER })],
    ];
    for (const [name, jwt] of cases) {
      const refusal = await googleChatAdapter.verify(request(chatMessage("hi"), jwt), ENV);
      assert(typeof refusal === "string", name);
      assert(!refusal.includes(ACCOUNT.privateKeyPem.slice(40, 80)), name);
    }
  });
});

Deno.test("googleChatAdapter.verify() takes a Google ID token for an endpoint-URL audience only when its email is Chat's", async () => {
  resetJwtCaches();
  const url = "https://baton.example.com/webhooks/google-chat";
  const env = { ...ENV, GOOGLE_CHAT_AUDIENCE: url };
  const idToken = (claims: Record<string, unknown>) =>
    signTestJwt(KEY, { issuer: "https://accounts.google.com", audience: url, now: NOW, claims });
  await withFetch(platform(), async () => {
    const good = await idToken({ email: GOOGLE_CHAT_ISSUER, email_verified: true });
    assertStrictEquals(await googleChatAdapter.verify(request(chatMessage("hi"), good), env), null);
    for (
      const claims of [
        { email: "attacker@gmail.com", email_verified: true },
        { email: GOOGLE_CHAT_ISSUER, email_verified: false },
        {},
      ]
    ) {
      const refusal = await googleChatAdapter.verify(
        request(chatMessage("hi"), await idToken(claims)),
        env,
      );
      assertStrictEquals(refusal, "the ID token is not Google Chat's", JSON.stringify(claims));
    }
    // Chat's own project-number token is not an ID token for the URL.
    assert(await googleChatAdapter.verify(request(chatMessage("hi"), await token()), env) !== null);
  });
});

Deno.test("googleChatAdapter.parse() takes a DM's message: one session per DM, deduplicated on the message name", () => {
  const ingress = googleChatAdapter.parse(request(chatMessage("  hello  "), null), ENV);
  assert(ingress.kind === "message");
  const { message } = ingress;
  assertStrictEquals(message.text, "hello");
  assertStrictEquals(message.sessionKey, "google-chat:spaces/AAAAdm0001");
  assertStrictEquals(message.deliveryKey, "google-chat:spaces/AAAAdm0001/messages/msg0001.msg0001");
  assertEquals(message.sender, {
    platform: "google-chat",
    user: "users/1111",
    name: "Grace Hopper",
    direct: true,
  });
  assertEquals(message.reply, {
    platform: "google-chat",
    space: "spaces/AAAAdm0001",
    thread: "spaces/AAAAdm0001/threads/thr0001",
  });
});

Deno.test("googleChatAdapter.parse() takes a mention in a space without the mention, one session per thread", () => {
  const event = chatMessage("@baton summarise this", {
    room: true,
    argumentText: " summarise this",
  });
  const ingress = googleChatAdapter.parse(request(event, null), ENV);
  assert(ingress.kind === "message");
  assertStrictEquals(ingress.message.text, "summarise this");
  assertStrictEquals(ingress.message.sessionKey, "google-chat:spaces/AAAAroom01/threads/thr0001");
  assertStrictEquals(ingress.message.sender.direct, false);
});

Deno.test("googleChatAdapter.parse() acknowledges other events, bots and empty messages with {} (nothing posted)", () => {
  const bot = chatMessage("beep");
  bot.user.type = "BOT";
  for (
    const event of [
      {
        type: "ADDED_TO_SPACE",
        space: { name: "spaces/AAA", type: "DM" },
        user: { name: "users/1" },
      },
      { type: "REMOVED_FROM_SPACE", space: { name: "spaces/AAA" } },
      bot,
      chatMessage("@baton", { room: true, argumentText: " " }),
    ]
  ) {
    const ingress = googleChatAdapter.parse(request(event, null), ENV);
    assertEquals(ingress, { kind: "respond", status: 200, body: {} });
  }
  assertEquals(googleChatAdapter.acknowledgement, { status: 200, body: {} });
});

Deno.test("googleChatAdapter.parse() answers a malformed MESSAGE event with PayloadError", () => {
  const bad = chatMessage("x");
  bad.space.name = "spaces/../../v1/other";
  for (const event of [{ type: "MESSAGE" }, bad]) {
    assert(
      assertThrows(() => googleChatAdapter.parse(request(event, null), ENV)) instanceof
        PayloadError,
    );
  }
});

const TARGET: GoogleChatTarget = {
  platform: "google-chat",
  space: "spaces/AAAAroom01",
  thread: "spaces/AAAAroom01/threads/thr0001",
};

Deno.test("googleChatAdapter.send() signs an RS256 assertion as the service account and posts in the thread with a client message id", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    let left = 0;
    assertEquals(
      await googleChatAdapter.send(TARGET, "one", { ...PART, leaving: () => left++ }, ENV),
      { ok: true },
    );
    assertEquals(
      await googleChatAdapter.send(TARGET, "two", { ...PART, index: 1, marker: "o12-p2" }, ENV),
      {
        ok: true,
      },
    );
    assertStrictEquals(left, 1);
    assertEquals(calls.map((c) => c.url.split("?")[0]), [
      TOKEN_URL,
      `${ROOT}/spaces/AAAAroom01/messages`,
      `${ROOT}/spaces/AAAAroom01/messages`,
    ]);
    const form = new URLSearchParams(String(calls[0].init.body));
    assertStrictEquals(form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
    const { payload, protectedHeader } = await jwtVerify(
      form.get("assertion") ?? "",
      ACCOUNT.key.publicKey,
      {
        issuer: ACCOUNT.email,
        audience: TOKEN_URL,
      },
    );
    assertStrictEquals(payload.scope, "https://www.googleapis.com/auth/chat.bot");
    assertEquals([protectedHeader.alg, protectedHeader.kid], ["RS256", "sa-key-1"]);
    const query = new URL(calls[1].url).searchParams;
    const id = await googleChatMessageId(TARGET.space, PART.marker);
    assertMatch(id, /^client-[a-z0-9-]{1,56}$/);
    assertEquals(Object.fromEntries(query), {
      messageId: id,
      requestId: id,
      messageReplyOption: "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
    });
    assert(new URL(calls[2].url).searchParams.get("messageId") !== id, "one id per part");
    assertStrictEquals(calls[1].headers.get("authorization"), "Bearer ya29.chat-token");
    assertEquals(calls[1].body, { text: "one", thread: { name: TARGET.thread } });
  });
});

Deno.test("googleChatAdapter.send() keeps a part's id across resends, takes 409 as sent, a 429 as a wait, a 500 as retryable", async () => {
  resetJwtCaches();
  const answers = [
    Response.json({ error: { code: 429, status: "RESOURCE_EXHAUSTED" } }, { status: 429 }),
    Response.json({ error: { code: 500, status: "INTERNAL" } }, { status: 500 }),
    Response.json({ error: { code: 409, status: "ALREADY_EXISTS" } }, { status: 409 }),
  ];
  await withFetch(platform((_, i) => answers[i]), async (calls) => {
    const limited = await googleChatAdapter.send(TARGET, "x", PART, ENV);
    assertEquals(limited, {
      ok: false,
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
      message: "the Google Chat API answered 429: RESOURCE_EXHAUSTED",
    });
    const failed = await googleChatAdapter.send(TARGET, "x", PART, ENV);
    assert(!failed.ok && failed.retryable && !failed.uncertain, JSON.stringify(failed));
    assertEquals(await googleChatAdapter.send(TARGET, "x", PART, ENV), { ok: true });
    const ids = new Set(calls.slice(1).map((c) => new URL(c.url).searchParams.get("requestId")));
    assertStrictEquals(ids.size, 1);
  });
});

Deno.test("googleChatAdapter.send() fails for good, naming no key, on a service account that is not one", async () => {
  resetJwtCaches();
  const broken = JSON.stringify({
    ...JSON.parse(ACCOUNT.json),
    private_key:
      "-----BEGIN PRIVATE KEY-----\nnot-a-key-but-long-enough-to-pass-the-length-check-of-sixty-four\n-----END PRIVATE KEY-----\n",
  });
  await withFetch(platform(), async (calls) => {
    for (const account of ["{not json", JSON.stringify({ client_email: "x" }), broken]) {
      const result = await googleChatAdapter.send(TARGET, "x", PART, {
        ...ENV,
        GOOGLE_CHAT_SERVICE_ACCOUNT: account,
      });
      assert(!result.ok && !result.retryable, JSON.stringify(result));
      assert(!result.message.includes("not-a-key") && !result.message.includes("{not"));
    }
    assertStrictEquals(calls.length, 0);
  });
});

Deno.test("googleChatAdapter.send() reports a refused token request without the assertion or the key", async () => {
  resetJwtCaches();
  await withFetch(
    (call) =>
      call.url === TOKEN_URL
        ? Response.json({ error: "invalid_grant", error_description: "Invalid JWT Signature." }, {
          status: 400,
        })
        : Response.json({}),
    async () => {
      const result = await googleChatAdapter.send(TARGET, "x", PART, ENV);
      assertEquals(result, {
        ok: false,
        status: 400,
        retryable: false,
        message: "the Google OAuth token endpoint answered 400: invalid_grant",
      });
    },
  );
});

Deno.test("replyChannel() resends a Google Chat part in doubt as it is: its request id makes a repeat harmless", async () => {
  const channel = replyChannel([googleChatAdapter], ENV);
  assertStrictEquals(
    await channel.inDoubt(TARGET, { index: 2, marker: "m" }, Date.now()),
    "resend",
  );
});

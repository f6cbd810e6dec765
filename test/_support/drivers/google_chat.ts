// Google Chat's driver: HTTP-app MESSAGE events (typed by @googleapis/chat) under Chat's own bearer JWT, Chat API replies read back; Deno (workerd tests, fuzzer, chaos run).
import type { chat_v1 } from "@googleapis/chat";
import { assertEquals, assertMatch } from "@std/assert";
import { decodeJwt } from "jose";
import {
  signTestJwt,
  testServiceAccount,
  type TestSigningKey,
  testSigningKey,
} from "../../../lib/platforms/_jwt_fixtures.ts";
import type { FakePlatform } from "../fake_platform.ts";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { seconds } from "./wire.ts";

const PROJECT = "123456789012";
/** The issuer of the tokens Chat sends an HTTP app that verifies with its project number. */
const ISSUER = "chat@system.gserviceaccount.com";
const ACCOUNT = await testServiceAccount();
const KEY = await testSigningKey("chat-key-1");
const STRANGER_KEY = await testSigningKey("chat-key-1");
const GRACE = { name: "users/1111", displayName: "Grace Hopper", type: "HUMAN" };

/**
 * What Chat signs a token with and what it says: the signing key, the audience (the project
 * number), the issuer (Chat's own when left out), a `kid` other than the key's.
 */
export interface GoogleChatCredentials {
  key: TestSigningKey;
  audience: string;
  issuer?: string;
  kid?: string;
}

function _token(c: GoogleChatCredentials, opts: { lifetime?: number; at?: number } = {}) {
  return signTestJwt(c.key, {
    issuer: c.issuer ?? ISSUER,
    audience: c.audience,
    ...(opts.at === undefined ? {} : { now: opts.at }),
    ...(opts.lifetime === undefined ? {} : { lifetime: opts.lifetime }),
    ...(c.kid === undefined ? {} : { kid: c.kid }),
  });
}

const _CREDENTIALS: GoogleChatCredentials = { key: KEY, audience: PROJECT };

function _headers(token: string | null): Record<string, string> {
  return {
    "content-type": "application/json",
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
  };
}

const _MESSAGES = /^\/chat\/v1\/(spaces\/[^/]+)\/messages(\?|$)/;

let _chats = 0;
let _ids = 0;

/** Google Chat's driver: a direct-message space with Grace per `newChat()`. */
export const googleChatDriver: Driver<GoogleChatCredentials> = {
  name: "google-chat",
  path: "/webhooks/google-chat",
  vars(platform?: FakePlatform) {
    if (platform && !platform.jwks.keys.includes(KEY.jwk)) platform.jwks.keys.push(KEY.jwk);
    return { GOOGLE_CHAT_AUDIENCE: PROJECT, GOOGLE_CHAT_SERVICE_ACCOUNT: ACCOUNT.json };
  },
  secretVars: ["GOOGLE_CHAT_AUDIENCE", "GOOGLE_CHAT_SERVICE_ACCOUNT"],
  newChat: () => `spaces/AAAAdrv${String(++_chats).padStart(4, "0")}`,
  session: (chat) => `google-chat:${chat}`,
  turnText: (text) => text,
  // A MESSAGE event in DM space `chat`; in a room (`group`) too, the app @mentioned.
  shape({ chat, text, id, from, group, mention, thread }: Post): chat_v1.Schema$DeprecatedEvent {
    const sender = from ? { name: from.id, displayName: from.name, type: "HUMAN" } : GRACE;
    return {
      type: "MESSAGE",
      eventTime: new Date().toISOString(),
      space: group
        ? { name: chat, type: "ROOM", spaceType: "SPACE" }
        : { name: chat, type: "DM", spaceType: "DIRECT_MESSAGE", singleUserBotDm: true },
      message: {
        name: id,
        sender,
        text: mention ? `@baton ${text}` : text,
        argumentText: mention ? ` ${text}` : text,
        thread: { name: thread ?? `${chat}/threads/t1` },
      },
      user: sender,
    };
  },
  credentials: _CREDENTIALS,
  stranger: { key: STRANGER_KEY, audience: PROJECT },
  async sign(_body, credentials, options = {}) {
    const at = options.at === undefined ? undefined : seconds(options.at);
    return _headers(await _token(credentials, { at }));
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const name = `${chat}/messages/${id ?? `d${++_ids}.d${_ids}`}`;
    const body = JSON.stringify(googleChatDriver.shape({ chat, text, id: name }));
    return { headers: await googleChatDriver.sign(body, _CREDENTIALS), body, id: name };
  },
  async tamper(delivery) {
    const forged = (token: string | null) => ({ ...delivery, headers: _headers(token) });
    return [
      forged(await _token(googleChatDriver.stranger)),
      forged(await _token({ ..._CREDENTIALS, audience: "999999999999" })),
      forged(await _token(_CREDENTIALS, { lifetime: -600 })),
      forged(await _token({ ..._CREDENTIALS, issuer: "someone@example.iam.gserviceaccount.com" })),
      forged("not-a-jwt"),
      forged(null),
    ];
  },
  // Chat resends the same event under a fresh token.
  redeliver: async (delivery) => ({ ...delivery, headers: _headers(await _token(_CREDENTIALS)) }),
  // An empty body: the reply comes later through the Chat API.
  ack: { json: {} },
  sent(call) {
    const match = _MESSAGES.exec(call.path);
    if (!match || typeof call.body?.text !== "string") return undefined;
    const params = new URL(call.path, "http://x").searchParams;
    return { chat: match[1], text: call.body.text, key: params.get("messageId") ?? undefined };
  },
  partLimit: 4096,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { error: { code: 429, status: "RESOURCE_EXHAUSTED" } },
  }),
  context: ({ chat }, delivery) => ({
    platform: "google-chat",
    chat_id: chat,
    thread_id: `${chat}/threads/t1`,
    user_id: GRACE.name,
    user_name: GRACE.displayName,
    session_key: `google-chat:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery, platform) {
    const { space } = JSON.parse(delivery.body);
    const url = new URL(call.path, "http://x");
    assertEquals(url.pathname, `/chat/v1/${space.name}/messages`);
    assertMatch(url.searchParams.get("messageId") ?? "", /^client-[a-z0-9-]+$/);
    assertEquals(url.searchParams.get("requestId"), url.searchParams.get("messageId"));
    assertEquals(
      url.searchParams.get("messageReplyOption"),
      "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
    );
    assertMatch(call.headers.get("authorization") ?? "", /^Bearer fake-access-token-\d+$/);
    assertEquals(call.body, { text: call.body.text, thread: { name: `${space.name}/threads/t1` } });
    // The token came from the service account's own signed JWT grant.
    const token = platform.auth.find((c) => c.path === "/auth/google/token");
    assertEquals(token?.body.grant_type, "urn:ietf:params:oauth:grant-type:jwt-bearer");
    const claims = decodeJwt(token?.body.assertion);
    assertEquals([claims.iss, claims.scope], [
      ACCOUNT.email,
      "https://www.googleapis.com/auth/chat.bot",
    ]);
  },
};

// Teams' driver: Bot Framework message activities (typed by botframework-schema) under a Bot Connector-shaped JWT (lowercase `serviceurl` claim, msteams endorsement), Bot Connector replies read back; Deno (workerd tests, fuzzer, chaos run).
import { assertEquals, assertMatch } from "@std/assert";
import type { Activity } from "botframework-schema";
import {
  signTestJwt,
  type TestSigningKey,
  testSigningKey,
} from "../../../lib/platforms/_jwt_fixtures.ts";
import type { FakePlatform } from "../fake_platform.ts";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { seconds } from "./wire.ts";

/** The bot's app id: the tokens' audience and every activity's recipient. */
export const TEAMS_APP_ID = "8e2f1d6a-3b1c-4f0e-9a7d-5c6b4a3f2e1d";
const APP_ID = TEAMS_APP_ID;
const PASSWORD = "teams-app-password-0123456789";
/** The Bot Connector's token issuer (botframework-connector's AuthenticationConstants). */
const ISSUER = "https://api.botframework.com";
const KEY = await testSigningKey("bf-key-1", { endorsements: ["msteams"] });
// Same key id, another key: what a forger who read the key set could sign with.
const STRANGER_KEY = await testSigningKey("bf-key-1", { endorsements: ["msteams"] });
const ADA = { id: "29:1ada", name: "Ada Lovelace", aadObjectId: "aad-ada-0001" };

/** The fake platform's origin, once `vars` was called: every activity names it as serviceUrl. */
let _origin = "http://127.0.0.1:9";
const _serviceUrl = () => `${_origin}/teams/`;

/**
 * What the Bot Connector signs a token with, and what it says: the signing key, the bot's app id
 * as audience, the service URL (the fake platform's when left out), a `kid` other than the key's.
 */
export interface TeamsCredentials {
  key: TestSigningKey;
  audience: string;
  serviceUrl?: string;
  kid?: string;
}

/** A Bot Connector token; `serviceurl` is the claim's name as the Connector signs it. */
function _token(c: TeamsCredentials, opts: { lifetime?: number; at?: number } = {}) {
  return signTestJwt(c.key, {
    issuer: ISSUER,
    audience: c.audience,
    ...(opts.at === undefined ? {} : { now: opts.at }),
    ...(opts.lifetime === undefined ? {} : { lifetime: opts.lifetime }),
    ...(c.kid === undefined ? {} : { kid: c.kid }),
    claims: { serviceurl: c.serviceUrl ?? _serviceUrl() },
  });
}

const _CREDENTIALS: TeamsCredentials = { key: KEY, audience: APP_ID };

function _headers(token: string | null): Record<string, string> {
  return {
    "content-type": "application/json",
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
  };
}

const _ACTIVITIES = /^\/teams\/v3\/conversations\/([^/]+)\/activities/;

let _chats = 0;
let _ids = 0;

/** Teams' driver: a personal chat with Ada per `newChat()`. */
export const teamsDriver: Driver<TeamsCredentials> = {
  name: "teams",
  path: "/webhooks/teams",
  vars(platform?: FakePlatform) {
    if (platform) {
      _origin = platform.url;
      if (!platform.jwks.keys.includes(KEY.jwk)) platform.jwks.keys.push(KEY.jwk);
    }
    return { TEAMS_APP_ID: APP_ID, TEAMS_APP_PASSWORD: PASSWORD };
  },
  secretVars: ["TEAMS_APP_ID", "TEAMS_APP_PASSWORD"],
  newChat: () => `a:1personal-driver-${++_chats}`,
  session: (chat) => `teams:${chat}`,
  turnText: (text) => text,
  // A personal chat's message from `from`; in a channel (`group`) too, the bot @mentioned.
  shape({ chat, text, id, from, group, mention, serviceUrl }: Post) {
    const person = from ? { id: from.id, name: from.name, aadObjectId: `aad-${from.id}` } : ADA;
    const activity: Partial<Activity> = {
      type: "message",
      id,
      timestamp: new Date(),
      serviceUrl: serviceUrl ?? _serviceUrl(),
      channelId: "msteams",
      from: person,
      conversation: {
        id: chat,
        conversationType: group ? "channel" : "personal",
        tenantId: "tenant-1",
        isGroup: !!group,
        name: "",
      },
      recipient: { id: `28:${APP_ID}`, name: "baton" },
      text: mention ? `<at>baton</at> ${text}` : text,
      textFormat: "plain",
      ...(mention
        ? {
          entities: [{
            type: "mention",
            text: "<at>baton</at>",
            mentioned: { id: `28:${APP_ID}`, name: "baton" },
          }],
        }
        : {}),
    };
    const { name: _, ...conversation } = activity.conversation!;
    return { ...activity, conversation };
  },
  credentials: _CREDENTIALS,
  stranger: { key: STRANGER_KEY, audience: APP_ID },
  async sign(_body, credentials, options = {}) {
    const at = options.at === undefined ? undefined : seconds(options.at);
    return _headers(await _token(credentials, { at }));
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const activityId = id ?? `17000000${String(++_ids).padStart(6, "0")}`;
    const body = JSON.stringify(teamsDriver.shape({ chat, text, id: activityId }));
    return { headers: await teamsDriver.sign(body, _CREDENTIALS), body, id: activityId };
  },
  async tamper(delivery) {
    const forged = (token: string | null) => ({ ...delivery, headers: _headers(token) });
    // A valid token for the fake's serviceUrl does not vouch for another one in the body.
    const elsewhere = JSON.stringify({
      ...JSON.parse(delivery.body),
      serviceUrl: "https://evil.example/",
    });
    return [
      forged(await _token(teamsDriver.stranger)),
      forged(await _token({ ..._CREDENTIALS, audience: "another-bot" })),
      forged(await _token(_CREDENTIALS, { lifetime: -600 })),
      forged(await _token({ ..._CREDENTIALS, serviceUrl: "https://evil.example/" })),
      forged("not-a-jwt"),
      forged(null),
      { ...delivery, body: elsewhere, headers: _headers(await _token(_CREDENTIALS)) },
    ];
  },
  // The Bot Connector resends the same activity (same id) under a fresh token.
  redeliver: async (delivery) => ({ ...delivery, headers: _headers(await _token(_CREDENTIALS)) }),
  ack: { json: { ok: true } },
  sent(call) {
    const match = _ACTIVITIES.exec(call.path);
    if (!match || call.body?.type !== "message" || typeof call.body.text !== "string") {
      return undefined;
    }
    return { chat: decodeURIComponent(match[1]), text: call.body.text };
  },
  partLimit: 25_000,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { error: { code: "Throttled" } },
  }),
  accepted: () => ({ status: 201, body: { id: "1:reply" } }),
  context: ({ chat }, delivery) => ({
    platform: "teams",
    chat_id: chat,
    thread_id: "",
    user_id: ADA.aadObjectId,
    user_name: ADA.name,
    session_key: `teams:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery, platform) {
    const { conversation } = JSON.parse(delivery.body);
    assertEquals(
      call.path,
      `/teams/v3/conversations/${encodeURIComponent(conversation.id)}/activities`,
    );
    assertMatch(call.headers.get("authorization") ?? "", /^Bearer fake-access-token-\d+$/);
    assertEquals(call.body, {
      type: "message",
      text: call.body.text,
      textFormat: "markdown",
      replyToId: delivery.id,
    });
    // The token came from the client-credentials grant with the app's own id and password.
    const token = platform.auth.find((c) => c.path === "/auth/teams/token");
    assertEquals(token?.body, {
      grant_type: "client_credentials",
      client_id: APP_ID,
      client_secret: PASSWORD,
      scope: "https://api.botframework.com/.default",
    });
  },
  expectParts(calls) {
    // One token serves every part.
    assertEquals(new Set(calls.map((c) => c.headers.get("authorization"))).size, 1);
  },
};

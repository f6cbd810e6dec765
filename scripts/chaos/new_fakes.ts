// The chaos run's fake WhatsApp, LINE, Twilio, Teams and Google Chat APIs (with their key sets and token endpoints): what each chat shows; Deno.
import { createLocalJWKSet, decodeJwt, type JWK, jwtVerify } from "jose";
import { testServiceAccount } from "../../lib/platforms/_jwt_fixtures.ts";
import {
  type ChaosServer,
  type FakeAnswer,
  type FakeCall,
  type FaultRates,
  startChaosServer,
} from "./fake_server.ts";
import { NEW_CREDENTIALS, type NewPlatformWay } from "./new_platforms.ts";
import type { PublishedKeys } from "./new_ways.ts";
import type { Sabotage } from "./fake_server.ts";
import type { ShownPost } from "./observation.ts";

/** The five fakes, the vars that point baton at them, and the key sets they publish. */
export interface NewPlatformFakes {
  servers: Record<NewPlatformWay, ChaosServer>;
  vars: Record<string, string>;
  keys: PublishedKeys;
}

/**
 * The most text each API takes in one message: a longer part is refused with a 400, as the real
 * APIs do (Teams' is about 28 KB), so a reply split above a platform's limit counts as lost.
 */
const _LIMITS: Record<NewPlatformWay, number> = {
  whatsapp: 4096,
  line: 5000,
  twilio: 1600,
  teams: 28_000,
  "google-chat": 4096,
};

/**
 * Starts the five fakes on loopback, each with its own seeded faults; every post they store goes
 * through `store`. "forget-retry-keys" makes LINE's and Chat's fakes store a repeated key again.
 */
export async function startNewPlatformFakes(
  rates: FaultRates,
  random: () => number,
  store: (post: Omit<ShownPost, "at">) => void,
  sabotage?: Sabotage,
): Promise<NewPlatformFakes> {
  const C = NEW_CREDENTIALS;
  const forget = sabotage === "forget-retry-keys";
  const tooLong = (way: NewPlatformWay, text: unknown) =>
    typeof text !== "string" || text.length > _LIMITS[way];
  const bearer = (call: FakeCall) =>
    /^Bearer (.+)$/.exec(call.headers.get("authorization") ?? "")?.[1];
  const faults = (limited: FakeAnswer, failed: FakeAnswer) => (status: number) =>
    status === 429
      ? { ...limited, status, headers: { "retry-after": "1" } }
      : { ...failed, status };

  // WhatsApp: POST /{phone-number-id}/messages, typing indicators on the same path.
  const whatsappPath = `/${C.whatsappPhoneId}/messages`;
  let wamids = 0;
  const whatsapp = await startChaosServer({
    rates,
    random,
    isSend: () => true,
    quiet: (call) => call.body?.typing_indicator !== undefined,
    chatOf: (call) => call.body?.to,
    textOf: (call) => call.body?.text?.body,
    faultAnswer: faults(
      {
        status: 429,
        body: { error: { code: 80007, message: "Rate limit hit", type: "OAuthException" } },
      },
      { status: 500, body: { error: { code: 1, message: "An unknown error occurred" } } },
    ),
    route: (call) => {
      if (bearer(call) !== C.whatsappToken) {
        return {
          status: 401,
          body: { error: { code: 190, message: "Invalid OAuth access token" } },
        };
      }
      if (call.method !== "POST" || call.path !== whatsappPath) {
        return { status: 400, body: { error: { code: 100, message: "Unsupported post request" } } };
      }
      if (call.body?.typing_indicator !== undefined) {
        return { status: 200, body: { success: true } };
      }
      const { to, text, context } = call.body ?? {};
      if (typeof to !== "string" || tooLong("whatsapp", text?.body)) {
        return { status: 400, body: { error: { code: 100, message: "Invalid parameter" } } };
      }
      store({
        way: "whatsapp",
        chat: to,
        text: text.body,
        ...(context?.message_id ? { replyToId: String(context.message_id) } : {}),
      });
      const id = `wamid.OUT${++wamids}`;
      return {
        status: 200,
        body: {
          messaging_product: "whatsapp",
          contacts: [{ input: to, wa_id: to }],
          messages: [{ id }],
        },
      };
    },
  });

  // LINE: POST /v2/bot/message/push under X-Line-Retry-Key; the loading animation is presence.
  const retryKeys = new Map<string, string[]>();
  const line = await startChaosServer({
    rates,
    random,
    isSend: () => true,
    quiet: (call) => call.path === "/v2/bot/chat/loading/start",
    chatOf: (call) => call.body?.to ?? call.body?.chatId,
    textOf: (call) => call.body?.messages?.[0]?.text,
    faultAnswer: faults(
      { status: 429, body: { message: "The API rate limit has been exceeded. Try again later." } },
      { status: 500, body: { message: "Internal server error" } },
    ),
    route: (call) => {
      if (bearer(call) !== C.lineToken) {
        return { status: 401, body: { message: "Authentication failed" } };
      }
      if (call.path === "/v2/bot/chat/loading/start") return { status: 200, body: {} };
      if (call.path !== "/v2/bot/message/push") {
        return { status: 404, body: { message: "Not found" } };
      }
      const key = call.headers.get("x-line-retry-key") ?? "";
      const { to, messages } = call.body ?? {};
      if (!/^[0-9a-f-]{36}$/.test(key) || typeof to !== "string" || !Array.isArray(messages)) {
        return { status: 400, body: { message: "The request body has 1 error(s)" } };
      }
      if (messages.some((m: { text?: unknown }) => tooLong("line", m?.text))) {
        return { status: 400, body: { message: "Length must be between 0 and 5000" } };
      }
      // A key LINE accepted before: 409 and the ids it sent then; nothing is sent again.
      const sent = retryKeys.get(key);
      if (sent && !forget) {
        return {
          status: 409,
          headers: { "x-line-accepted-request-id": key },
          body: {
            message: "The retry key is already accepted",
            sentMessages: sent.map((id) => ({ id })),
          },
          repeat: true,
        };
      }
      const ids = messages.map((m: { text: string }) => {
        store({ way: "line", chat: to, text: m.text });
        return String(500_000 + retryKeys.size);
      });
      retryKeys.set(key, ids);
      return {
        status: 200,
        body: { sentMessages: ids.map((id) => ({ id, quoteToken: "q" })) },
        ...(sent ? { repeat: true } : {}),
      };
    },
  });

  // Twilio: POST /2010-04-01/Accounts/{sid}/Messages.json, a form, basic auth.
  const twilioPath = `/2010-04-01/Accounts/${C.twilioSid}/Messages.json`;
  let smsIds = 0;
  const twilio = await startChaosServer({
    rates,
    random,
    isSend: () => true,
    chatOf: (call) => call.body?.To,
    textOf: (call) => call.body?.Body,
    faultAnswer: faults(
      { status: 429, body: { code: 20429, message: "Too Many Requests", status: 429 } },
      { status: 500, body: { code: 20500, message: "Internal Server Error", status: 500 } },
    ),
    route: (call) => {
      if (
        call.headers.get("authorization") !== `Basic ${btoa(`${C.twilioSid}:${C.twilioToken}`)}`
      ) {
        return { status: 401, body: { code: 20003, message: "Authenticate", status: 401 } };
      }
      if (call.method !== "POST" || call.path !== twilioPath) {
        return { status: 404, body: { code: 20404, message: "Not Found", status: 404 } };
      }
      const { To, From, Body } = call.body ?? {};
      if (From !== C.twilioNumber || typeof To !== "string") {
        return { status: 400, body: { code: 21212, message: "Invalid From Number", status: 400 } };
      }
      if (tooLong("twilio", Body)) {
        return {
          status: 400,
          body: { code: 21617, message: "Body exceeds 1600 characters", status: 400 },
        };
      }
      store({ way: "twilio", chat: To, text: Body });
      const sid = `SM${(++smsIds).toString(16).padStart(32, "0")}`;
      return { status: 201, body: { sid, status: "queued", to: To, from: From, body: Body } };
    },
  });

  // Teams: OpenID metadata, its key set, the token endpoint and the Bot Connector on one origin.
  const keys: PublishedKeys = { teams: { keys: [] }, google: { keys: [] }, teamsServiceUrl: "" };
  const teamsTokens = new Set<string>();
  const activities = /^\/teams\/v3\/conversations\/([^/]+)\/activities$/;
  let teamsUrl = "";
  const teams = await startChaosServer({
    rates,
    random,
    isSend: (call) => activities.test(call.path),
    quiet: (call) =>
      call.method === "GET" || (activities.test(call.path) && call.body?.type === "typing"),
    chatOf: (call) => {
      const id = activities.exec(call.path)?.[1];
      return id === undefined ? undefined : decodeURIComponent(id);
    },
    textOf: (call) => call.body?.text,
    faultAnswer: faults(
      { status: 429, body: { error: { code: "TooManyRequests", message: "Too many requests" } } },
      { status: 502, body: { error: { code: "ServiceError", message: "Bad gateway" } } },
    ),
    route: (call) => {
      if (call.path === "/auth/openid") {
        return {
          status: 200,
          body: {
            issuer: "https://api.botframework.com",
            jwks_uri: `${teamsUrl}/auth/jwks`,
            id_token_signing_alg_values_supported: ["RS256"],
          },
        };
      }
      if (call.path === "/auth/jwks") return { status: 200, body: keys.teams };
      if (call.path === "/auth/token") {
        const form = call.body ?? {};
        if (
          form.grant_type !== "client_credentials" || form.client_id !== C.teamsAppId ||
          form.client_secret !== C.teamsPassword
        ) {
          return { status: 401, body: { error: "invalid_client" } };
        }
        const token = `chaos-teams-token-${teamsTokens.size + 1}`;
        teamsTokens.add(token);
        return {
          status: 200,
          body: { token_type: "Bearer", expires_in: 3600, access_token: token },
        };
      }
      const match = activities.exec(call.path);
      if (!match || call.method !== "POST") {
        return { status: 404, body: { error: { code: "NotFound" } } };
      }
      if (!teamsTokens.has(bearer(call) ?? "")) {
        return {
          status: 401,
          body: { message: "Authorization has been denied for this request." },
        };
      }
      const { type, text, replyToId } = call.body ?? {};
      if (type === "typing") return { status: 200, body: {} };
      if (type !== "message" || tooLong("teams", text)) {
        return {
          status: 400,
          body: { error: { code: "BadArgument", message: "Invalid activity" } },
        };
      }
      store({
        way: "teams",
        chat: decodeURIComponent(match[1]),
        text,
        ...(typeof replyToId === "string" ? { replyToId } : {}),
      });
      return { status: 201, body: { id: `act-${teams.events.length}` } };
    },
  });
  teamsUrl = teams.url;
  keys.teamsServiceUrl = `${teams.url}/teams/`;

  // Google Chat: its key set, the token endpoint (a service account's signed assertion) and
  // spaces.messages.create, which creates a message once per request id.
  const account = await testServiceAccount("chaos-bot@chaos.iam.gserviceaccount.com");
  const accountKeys = createLocalJWKSet({ keys: [account.key.jwk as JWK] });
  const googleTokens = new Set<string>();
  const created = new Map<string, unknown>();
  const spaceMessages = /^\/v1\/(spaces\/[^/]+)\/messages$/;
  let googleUrl = "";
  const google = await startChaosServer({
    rates,
    random,
    isSend: (call) => spaceMessages.test(call.path),
    quiet: (call) => call.method === "GET",
    chatOf: (call) => spaceMessages.exec(call.path)?.[1],
    textOf: (call) => call.body?.text,
    faultAnswer: faults(
      {
        status: 429,
        body: { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota" } },
      },
      { status: 503, body: { error: { code: 503, status: "UNAVAILABLE", message: "Try again" } } },
    ),
    route: async (call) => {
      if (call.path === "/auth/jwks") return { status: 200, body: keys.google };
      if (call.path === "/auth/token") return await _googleToken(call, `${googleUrl}/auth/token`);
      const match = spaceMessages.exec(call.path);
      if (!match || call.method !== "POST") {
        return { status: 404, body: { error: { code: 404, status: "NOT_FOUND" } } };
      }
      if (!googleTokens.has(bearer(call) ?? "")) {
        return { status: 401, body: { error: { code: 401, status: "UNAUTHENTICATED" } } };
      }
      const messageId = call.query.get("messageId") ?? "";
      const requestId = call.query.get("requestId") ?? "";
      const { text, thread } = call.body ?? {};
      if (!/^client-[a-z0-9-]{1,56}$/.test(messageId) || tooLong("google-chat", text)) {
        return { status: 400, body: { error: { code: 400, status: "INVALID_ARGUMENT" } } };
      }
      // The same request id: the message created then, not a second one.
      const earlier = created.get(`${match[1]} ${requestId}`);
      if (earlier && !forget) return { status: 200, body: earlier, repeat: true };
      const message = {
        name: `${match[1]}/messages/${messageId}`,
        text,
        thread: { name: thread?.name ?? `${match[1]}/threads/new${created.size}` },
      };
      created.set(`${match[1]} ${requestId}`, message);
      store({
        way: "google-chat",
        chat: match[1],
        text,
        ...(thread?.name ? { replyToId: String(thread.name) } : {}),
      });
      return { status: 200, body: message, ...(earlier ? { repeat: true } : {}) };
    },
  });
  googleUrl = google.url;

  /** The token endpoint: a JWT-bearer assertion signed by the service account's key, for itself. */
  async function _googleToken(call: FakeCall, audience: string): Promise<FakeAnswer> {
    const { grant_type, assertion } = call.body ?? {};
    try {
      if (grant_type !== "urn:ietf:params:oauth:grant-type:jwt-bearer") throw new Error("grant");
      await jwtVerify(String(assertion), accountKeys, { issuer: account.email, audience });
      if (decodeJwt(String(assertion)).scope !== "https://www.googleapis.com/auth/chat.bot") {
        throw new Error("scope");
      }
    } catch {
      return { status: 400, body: { error: "invalid_grant" } };
    }
    const token = `chaos-google-token-${googleTokens.size + 1}`;
    googleTokens.add(token);
    return { status: 200, body: { token_type: "Bearer", expires_in: 3600, access_token: token } };
  }

  return {
    servers: { whatsapp, line, twilio, teams, "google-chat": google },
    keys,
    vars: {
      WHATSAPP_API_ROOT: whatsapp.url,
      WHATSAPP_ACCESS_TOKEN: C.whatsappToken,
      LINE_API_ROOT: line.url,
      LINE_DATA_API_ROOT: line.url,
      LINE_CHANNEL_ACCESS_TOKEN: C.lineToken,
      TWILIO_API_ROOT: twilio.url,
      TEAMS_OPENID_URL: `${teams.url}/auth/openid`,
      TEAMS_TOKEN_URL: `${teams.url}/auth/token`,
      TEAMS_APP_PASSWORD: C.teamsPassword,
      GOOGLE_CHAT_JWKS_URL: `${google.url}/auth/jwks`,
      GOOGLE_CHAT_TOKEN_URL: `${google.url}/auth/token`,
      GOOGLE_CHAT_API_ROOT: `${google.url}/v1`,
      GOOGLE_CHAT_SERVICE_ACCOUNT: account.json,
    },
  };
}

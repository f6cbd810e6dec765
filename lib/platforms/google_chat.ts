// Google Chat adapter: events in (Chat API interaction events, or a Workspace add-on's event objects) as JWTs from Chat's issuer or Google ID tokens for a URL audience, card clicks answered privately, Chat API messages out as the service account, idempotent by client message id; runtime-neutral (fetch, Web Crypto, jose).
import { importPKCS8, SignJWT } from "jose";
import { z } from "zod";
import {
  type Ingress,
  isChoiceData,
  parseJsonBody,
  type PartSend,
  PayloadError,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type RawRequest,
  type SendResult,
  type Unverifiable,
  type WebhookAnswer,
} from "../platform.ts";
import { apiRoot, detail, encodeHex, jsonField, retryAfterHeader, sendRequest } from "./_kit.ts";
import { accessToken, bearerToken, JWT_CLOCK_TOLERANCE_SECONDS, verifyJwt } from "./_jwt.ts";
import {
  answerGoogleChatChoice,
  GOOGLE_CHAT_ADD_ON,
  GOOGLE_CHAT_CHOICE,
  googleChatCards,
} from "./google_chat_cards.ts";

/** The issuer (and, for a URL audience, the ID token's email) of every request Google Chat sends. */
export const GOOGLE_CHAT_ISSUER = "chat@system.gserviceaccount.com";
const _CHAT_JWKS_URL =
  "https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com";
/** Google's OIDC keys: they sign the ID tokens sent when the audience is the endpoint URL. */
const _GOOGLE_OIDC_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs";
const _GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];
/**
 * The email of the ID token a Chat app built as a Google Workspace add-on is called with: its
 * project's add-on service agent, `service-<PROJECT_NUMBER>@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`,
 * for the endpoint URL as audience ("Verify requests from Google Chat",
 * https://developers.google.com/workspace/chat/verify-requests-from-chat: the token is also in the
 * body as `authorizationEventObject.systemIdToken`).
 */
export function googleChatAddOnAgent(projectNumber: string): string {
  return `service-${projectNumber}@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`;
}
const _DEFAULT_TOKEN_URL = "https://oauth2.googleapis.com/token";
const _DEFAULT_API_ROOT = "https://chat.googleapis.com/v1";
const _SCOPE = "https://www.googleapis.com/auth/chat.bot";
/** The longest a request's token may still be valid (google-auth-library's DEFAULT_MAX_TOKEN_LIFETIME_SECS_). */
const _MAX_TOKEN_LIFETIME_SECONDS = 86_400;
/** Google's 429s usually state no wait: two seconds, then the outbox backs off further. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 2_000;

const _SPACE = /^spaces\/[A-Za-z0-9_-]{1,128}$/;
const _THREAD = /^spaces\/[A-Za-z0-9_-]{1,128}\/threads\/[A-Za-z0-9_.-]{1,128}$/;
const _MESSAGE = /^spaces\/[A-Za-z0-9_-]{1,128}\/messages\/[A-Za-z0-9_.-]{1,128}$/;

const _space = z.looseObject({
  name: z.string().regex(_SPACE),
  type: z.string().optional(),
  spaceType: z.string().optional(),
  singleUserBotDm: z.boolean().optional(),
  displayName: z.string().max(512).optional(),
});
const _user = z.looseObject({
  name: z.string().min(1).max(256),
  displayName: z.string().max(512).optional(),
  type: z.string().optional(),
});
const _thread = z.looseObject({ name: z.string().regex(_THREAD) }).nullish();

const _message = z.looseObject({
  name: z.string().regex(_MESSAGE),
  text: z.string().max(100_000).optional(),
  argumentText: z.string().max(100_000).optional(),
  thread: _thread,
});
const _cardMessage = z.looseObject({ name: z.string().regex(_MESSAGE), thread: _thread });

const _event = z.looseObject({
  type: z.literal("MESSAGE"),
  space: _space,
  message: _message,
  user: _user,
});

/**
 * A click on a card button: the card's message (its thread names the session), the clicker, and
 * the button's action twice over — `common` (the current shape: `invokedFunction`, `parameters`
 * as a map) and the older `action` (`actionMethodName`, `parameters` as key/value pairs).
 */
const _click = z.looseObject({
  type: z.literal("CARD_CLICKED"),
  eventTime: z.string().max(64).optional(),
  space: _space,
  message: _cardMessage,
  user: _user,
  common: z.looseObject({
    invokedFunction: z.string().max(256).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }).optional(),
  action: z.looseObject({
    actionMethodName: z.string().max(256).optional(),
    parameters: z.array(z.looseObject({ key: z.string(), value: z.unknown() })).max(64).optional(),
  }).optional(),
});

/**
 * A Workspace add-on's event object as an add-on that extends Chat gets it (the add-ons endpoint
 * interface, https://developers.google.com/workspace/add-ons/reference/callback-contract, and
 * Google's add-on samples, googleworkspace/add-ons-samples node/chat/*): `commonEventObject`
 * (for a click, `parameters` — `invokedFunction` is not filled in for Chat add-ons, per
 * CommonEventObject in @googleapis/chat), `authorizationEventObject.systemIdToken`, and `chat`:
 * the `user`, the `eventTime` and one payload — `messagePayload` {message, space} for a message
 * (what a Chat API app gets as `MESSAGE`), `buttonClickedPayload` {message, space} for a card
 * click (`CARD_CLICKED`), `addedToSpacePayload`, `removedFromSpacePayload`, `appCommandPayload`…
 */
const _addOnEvent = z.looseObject({
  commonEventObject: z.looseObject({
    parameters: z.record(z.string(), z.unknown()).optional(),
  }).optional(),
  chat: z.looseObject({
    user: _user,
    eventTime: z.string().max(64).optional(),
    messagePayload: z.looseObject({ space: _space, message: _message }).optional(),
    buttonClickedPayload: z.looseObject({ space: _space, message: _cardMessage }).optional(),
  }),
});

/** Where a Google Chat reply goes: the space, and the thread it continues. */
const _target = z.object({
  platform: z.literal("google-chat"),
  space: z.string().regex(_SPACE),
  thread: z.string().regex(_THREAD).optional(),
});

/** A Google Chat reply target, as stored with the message. */
export type GoogleChatTarget = z.infer<typeof _target>;

/** The fields of a service-account key JSON baton uses. */
const _serviceAccount = z.looseObject({
  client_email: z.string().min(3).max(512),
  private_key: z.string().min(64),
  private_key_id: z.string().max(128).optional(),
});

/** Google Chat reads a synchronous answer as a message: an empty object posts nothing. */
const _ACK: WebhookAnswer = { status: 200, body: {} };
const _IGNORE = { kind: "respond", ..._ACK } as const;

function _urlAudience(audience: string): boolean {
  return /^https?:\/\//i.test(audience);
}

/**
 * Google Chat's request verification: with a project-number audience, a JWT issued by
 * `chat@system.gserviceaccount.com` for that number, signed by a key of Chat's JWKS; with an
 * endpoint-URL audience, a Google-signed ID token for that URL whose verified email is Chat's.
 */
async function _verify(
  request: RawRequest,
  env: PlatformEnv,
): Promise<string | Unverifiable | null> {
  const audience = (env.GOOGLE_CHAT_AUDIENCE ?? "").trim();
  if (!audience) return "GOOGLE_CHAT_AUDIENCE is not set";
  const token = bearerToken(request.headers);
  if (!token) return "missing Authorization: Bearer token";
  const url = _urlAudience(audience);
  const verified = await verifyJwt(
    token,
    { jwksUrl: env.GOOGLE_CHAT_JWKS_URL || (url ? _GOOGLE_OIDC_JWKS_URL : _CHAT_JWKS_URL) },
    { issuer: url ? _GOOGLE_ISSUERS : GOOGLE_CHAT_ISSUER, audience, algorithms: ["RS256"] },
    request.nowSeconds,
  );
  if (typeof verified === "string" || "unavailable" in verified) return verified;
  // As google-auth-library's verifySignedJwtWithCertsAsync (Chat's documented check): iat and exp
  // required, not issued more than the skew ahead, lasting less than a day. Chat's own tokens last
  // an hour; jose alone took a token without them or one valid for a year.
  const { iat, exp } = verified.payload;
  if (typeof iat !== "number" || typeof exp !== "number") return "the token has no iat or exp";
  if (iat > request.nowSeconds + JWT_CLOCK_TOLERANCE_SECONDS) return "the token is issued ahead";
  if (exp >= request.nowSeconds + _MAX_TOKEN_LIFETIME_SECONDS) {
    return "the token lasts longer than a day";
  }
  if (url) {
    // Any Google account can get an ID token for our URL: only Chat's own is Chat — Chat's
    // account for a Chat API app, or, for an app built as a Workspace add-on, the add-on service
    // agent of the project named in GOOGLE_CHAT_ADDON_PROJECT_NUMBER (any other project's agent
    // is another app).
    const { email, email_verified: emailVerified } = verified.payload;
    const agent = _addOnAgent(env);
    if ((email !== GOOGLE_CHAT_ISSUER && email !== agent) || emailVerified !== true) {
      return "the ID token is not Google Chat's";
    }
  }
  return null;
}

/**
 * The add-on service agent whose ID tokens are Chat's, or undefined: only with a URL audience (an
 * add-on's tokens name the endpoint URL) and a project number of digits.
 */
function _addOnAgent(env: PlatformEnv): string | undefined {
  const project = (env.GOOGLE_CHAT_ADDON_PROJECT_NUMBER ?? "").trim();
  if (!/^[0-9]{1,20}$/.test(project)) return undefined;
  return _urlAudience((env.GOOGLE_CHAT_AUDIENCE ?? "").trim())
    ? googleChatAddOnAgent(project)
    : undefined;
}

/**
 * What a card button invokes: for an app built as a Workspace add-on, its HTTP endpoint (an
 * add-on's action `function` is the URL Chat calls, as Google's add-on samples set it:
 * googleworkspace/add-ons-samples node/chat/contact-form-app); else the name a Chat API app
 * reads back.
 */
function _buttonFunction(env: PlatformEnv): string {
  return _addOnAgent(env) ? (env.GOOGLE_CHAT_AUDIENCE ?? "").trim() : GOOGLE_CHAT_CHOICE.function;
}

function _parse(body: Uint8Array): Ingress<GoogleChatTarget> {
  const raw = parseJsonBody(body);
  const type = jsonField(raw, "type");
  // A Workspace add-on's event object has no `type`: its host app's object (`chat`) says what.
  if (type === undefined && jsonField(raw, "chat") !== undefined) return _parseAddOn(raw);
  if (type === "CARD_CLICKED") return _parseClick(raw);
  // ADDED_TO_SPACE, REMOVED_FROM_SPACE…: acknowledged, no turn.
  if (type !== "MESSAGE") return _IGNORE;
  const parsed = _event.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the MESSAGE event is malformed");
  const { space, message, user } = parsed.data;
  return _messageIngress(space, message, user);
}

/** A message to the app (either event shape) as a turn, or ignored (another app's, empty). */
function _messageIngress(
  space: z.infer<typeof _space>,
  message: z.infer<typeof _message>,
  user: z.infer<typeof _user>,
): Ingress<GoogleChatTarget> {
  if (user.type === "BOT") return _IGNORE; // another app: never a turn
  // In a space Chat sends only messages that mention the app; argumentText is them without it.
  const text = (message.argumentText ?? message.text ?? "").trim();
  if (!text) return _IGNORE;
  return {
    kind: "message",
    message: {
      ..._origin(space, message, user),
      // The message's resource name: a redelivery names the same message.
      deliveryKey: `google-chat:${message.name}`,
      text,
    },
  };
}

/**
 * A Workspace add-on's event: `chat.messagePayload` is the same message a Chat API app gets in a
 * `MESSAGE` event (the same session, delivery key and reply), `chat.buttonClickedPayload` with
 * baton's `choice` parameter the same click as `CARD_CLICKED`; every other payload (added to or
 * removed from a space, app commands, widget updates) is acknowledged.
 */
function _parseAddOn(raw: unknown): Ingress<GoogleChatTarget> {
  const parsed = _addOnEvent.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the add-on event is malformed");
  const { chat, commonEventObject } = parsed.data;
  if (chat.messagePayload) {
    return _messageIngress(chat.messagePayload.space, chat.messagePayload.message, chat.user);
  }
  if (!chat.buttonClickedPayload) return _IGNORE;
  const { space, message } = chat.buttonClickedPayload;
  const choice = _choice(
    space,
    message,
    chat.user,
    chat.eventTime,
    commonEventObject?.parameters?.[GOOGLE_CHAT_CHOICE.parameter],
  );
  // The click is answered in the add-on's envelope: the handle says so (answerGoogleChatChoice).
  return choice ? { kind: "choice", choice: { ...choice, handle: GOOGLE_CHAT_ADD_ON } } : _IGNORE;
}

/**
 * Where a message or a click on a card message comes from, as both are bound: the session (a DM,
 * or a space's thread), the context, the reply target and the sender.
 */
function _origin(
  space: z.infer<typeof _space>,
  message: { name: string; thread?: { name?: string } | null },
  user: { name: string; displayName?: string | undefined },
) {
  const direct = _isDirect(space);
  const thread = message.thread?.name;
  const name = user.displayName || user.name;
  return {
    sessionKey: _sessionKey(space.name, direct, thread),
    context: {
      chat_id: space.name,
      chat_name: space.displayName ?? "",
      thread_id: thread ?? "",
      user_id: user.name,
      user_name: name,
      message_id: message.name,
    },
    reply: { platform: "google-chat" as const, space: space.name, ...(thread ? { thread } : {}) },
    sender: { user: user.name, name, direct },
  };
}

/** Whether a space is a direct message with the app. */
function _isDirect(space: z.infer<typeof _space>): boolean {
  return space.type === "DM" || space.spaceType === "DIRECT_MESSAGE" ||
    space.singleUserBotDm === true;
}

/** A DM is one conversation; in a space each thread is its own. */
function _sessionKey(space: string, direct: boolean, thread: string | undefined): string {
  return `google-chat:${!direct && thread ? thread : space}`;
}

/**
 * A `CARD_CLICKED` event on one of baton's buttons: its session is the card message's DM or
 * thread, where the question was posted; the clicker is `user`, as a message's sender is. A click
 * on anything else (another function, another app's data, an app clicking) is acknowledged.
 */
function _parseClick(raw: unknown): Ingress<GoogleChatTarget> {
  const parsed = _click.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the CARD_CLICKED event is malformed");
  const { space, message, user, common, action, eventTime } = parsed.data;
  const fn = common?.invokedFunction ?? action?.actionMethodName;
  const data = common?.parameters?.[GOOGLE_CHAT_CHOICE.parameter] ??
    action?.parameters?.find((p) => p.key === GOOGLE_CHAT_CHOICE.parameter)?.value;
  if (fn !== GOOGLE_CHAT_CHOICE.function) return _IGNORE;
  const choice = _choice(space, message, user, eventTime, data);
  return choice ? { kind: "choice", choice } : _IGNORE;
}

/** A click on a card message as the clicker's choice, or null (not baton's data, an app's click). */
function _choice(
  space: z.infer<typeof _space>,
  message: z.infer<typeof _cardMessage>,
  user: z.infer<typeof _user>,
  eventTime: string | undefined,
  data: unknown,
): PlatformChoice<GoogleChatTarget> | null {
  if (!isChoiceData(data) || user.type === "BOT") return null;
  return {
    ..._origin(space, message, user),
    // Chat gives a click no id of its own: the card, the clicker and the click's time name it.
    deliveryKey: `google-chat:click:${message.name}:${user.name}:${eventTime ?? ""}`,
    data,
  };
}

/**
 * The client-assigned message id of a part (`client-…`, lowercase, ≤ 63 characters) drawn from
 * the space and the part's marker: a resend of the same part asks for the same message, which
 * Chat creates once. Without a marker (a notice outside the outbox), a fresh one.
 */
export async function googleChatMessageId(
  space: string,
  marker: string | undefined,
): Promise<string> {
  const seed = marker ? `${space}|${marker}` : crypto.randomUUID();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed));
  return `client-baton-${encodeHex(new Uint8Array(digest)).slice(0, 48)}`;
}

async function _assertionForm(
  account: z.infer<typeof _serviceAccount>,
  tokenUrl: string,
): Promise<URLSearchParams> {
  const key = await importPKCS8(account.private_key, "RS256");
  const assertion = await new SignJWT({ scope: _SCOPE })
    .setProtectedHeader({
      alg: "RS256",
      typ: "JWT",
      ...(account.private_key_id ? { kid: account.private_key_id } : {}),
    })
    .setIssuer(account.client_email)
    .setSubject(account.client_email)
    .setAudience(tokenUrl)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
  return new URLSearchParams({
    grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    assertion,
  });
}

/** The service account of `GOOGLE_CHAT_SERVICE_ACCOUNT`, or null (nothing of it is ever quoted). */
function _account(env: PlatformEnv): z.infer<typeof _serviceAccount> | null {
  try {
    const parsed = _serviceAccount.safeParse(JSON.parse(env.GOOGLE_CHAT_SERVICE_ACCOUNT ?? ""));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function _send(
  target: GoogleChatTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const account = _account(env);
  if (!account) {
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "GOOGLE_CHAT_SERVICE_ACCOUNT is not a service-account key JSON",
    };
  }
  const tokenUrl = env.GOOGLE_CHAT_TOKEN_URL || _DEFAULT_TOKEN_URL;
  const secrets = [account.private_key, env.GOOGLE_CHAT_SERVICE_ACCOUNT ?? ""];
  let token: Awaited<ReturnType<typeof accessToken>>;
  try {
    token = await accessToken({
      cacheKey: `google-chat ${tokenUrl} ${account.client_email}`,
      url: tokenUrl,
      api: "Google OAuth token endpoint",
      secrets,
      form: () => _assertionForm(account, tokenUrl),
    });
  } catch {
    // importPKCS8 refuses a key that is not PKCS#8 PEM; its error is not passed on.
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "GOOGLE_CHAT_SERVICE_ACCOUNT's private_key is not a PKCS#8 RSA key",
    };
  }
  if (!token.ok) return token;
  const root = apiRoot(env, "GOOGLE_CHAT_API_ROOT", _DEFAULT_API_ROOT);
  const id = await googleChatMessageId(target.space, part.marker);
  const query = new URLSearchParams({ messageId: id, requestId: id });
  if (target.thread) query.set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
  const result = await sendRequest(`${root}/${target.space}/messages?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      text,
      ...(part.choices?.length
        ? { cardsV2: googleChatCards(part.choices, _buttonFunction(env)) }
        : {}),
      ...(target.thread ? { thread: { name: target.thread } } : {}),
    }),
  }, {
    api: "Google Chat API",
    leaving: part.leaving,
    secrets: [token.token, ...secrets],
    // The request id makes a repeat return the message already created: a 5xx may be resent.
    idempotent: true,
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }) =>
      `the Google Chat API answered ${status}${detail(jsonField(body, "error", "status"))}`,
  });
  // ALREADY_EXISTS for our client id: an earlier send of this very part was created.
  if (!result.ok && result.status === 409) return { ok: true };
  return result;
}

/**
 * Google Chat as an HTTP app: `MESSAGE` events in (DMs, and mentions in spaces, the mention left
 * out) and `CARD_CLICKED` on baton's buttons — or the same as a Workspace add-on's event objects
 * (`chat.messagePayload`, `chat.buttonClickedPayload`) for an app built as an add-on — replies out through the Chat API as the service
 * account, in the thread they answer (a question with a card of buttons); every part has a client
 * message id and request id drawn from its marker, so a resend is created once. No `typing`: Chat
 * has no API for an app's typing indicator.
 */
export const googleChatAdapter: PlatformAdapter<GoogleChatTarget> = {
  name: "google-chat",
  requiredEnv: ["GOOGLE_CHAT_AUDIENCE", "GOOGLE_CHAT_SERVICE_ACCOUNT"],
  maxMessageChars: 4096,
  asyncDelivery: false,
  replyTarget: _target,
  acknowledgement: _ACK,
  verify: _verify,
  parse: (request) => _parse(request.body),
  send: _send,
  // Every part's request id is drawn from its marker: sending it again cannot show twice.
  idempotentPart: () => true,
  answerChoice: answerGoogleChatChoice,
};

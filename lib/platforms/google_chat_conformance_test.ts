// Conformance: the Google Chat adapter against google-auth-library's token verification and JWT client, and @googleapis/chat's client and message/card schema, for Chat API apps and apps built as Workspace add-ons; Deno (tests only).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { auth as googleapisAuth, chat, type chat_v1 } from "@googleapis/chat";
import { JWT, OAuth2Client } from "google-auth-library";
import { base64url, decodeJwt, decodeProtectedHeader, exportSPKI, SignJWT } from "jose";
import { approvalClickText, PayloadError, type RawRequest } from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import {
  GOOGLE_CHAT_ISSUER,
  googleChatAdapter,
  googleChatAddOnAgent,
  type GoogleChatTarget,
} from "./google_chat.ts";
import { GOOGLE_CHAT_CHOICE } from "./google_chat_cards.ts";
import { resetJwtCaches } from "./_jwt.ts";
import {
  signTestJwt,
  type TestClaims,
  testServiceAccount,
  testSigningKey,
} from "./_jwt_fixtures.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const PROJECT = "123456789012";
const ENDPOINT = "https://baton.example.com/webhooks/google-chat";
const JWKS = "http://keys.chat.test/jwk";
const KEY = await testSigningKey("chat-key-1");
const IMPOSTOR = await testSigningKey("chat-key-1");
/**
 * Google's certificate map as `verifySignedJwtWithCertsAsync` takes it, `{kid: PEM}`: Google serves
 * X.509 certificates; its Node path hands the PEM to `crypto.createVerify`, which takes an SPKI
 * public key as well (jose makes no certificates).
 */
const CERTS = { [String(KEY.jwk.kid)]: await exportSPKI(KEY.publicKey) };

function env(audience: string) {
  return { GOOGLE_CHAT_AUDIENCE: audience, GOOGLE_CHAT_JWKS_URL: JWKS };
}

function raw(body: unknown, token: string | null): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    }),
    body: new TextEncoder().encode(JSON.stringify(body)),
    url: ENDPOINT,
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

// ── events as Chat sends them, typed with @googleapis/chat ──────────────────────────────────────

const GRACE: chat_v1.Schema$User = {
  name: "users/1111",
  displayName: "Grace Hopper",
  type: "HUMAN",
};
const APP: chat_v1.Schema$User = { name: "users/app-1", displayName: "baton", type: "BOT" };
const DM_SPACE: chat_v1.Schema$Space = {
  name: "spaces/AAAAdm0001",
  type: "DM",
  spaceType: "DIRECT_MESSAGE",
  singleUserBotDm: true,
};
const ROOM: chat_v1.Schema$Space = {
  name: "spaces/AAAAroom01",
  type: "ROOM",
  spaceType: "SPACE",
  displayName: "Team room",
};

/** A classic interaction event (`DeprecatedEvent`): a DM message. */
const DM: chat_v1.Schema$DeprecatedEvent = {
  type: "MESSAGE",
  eventTime: "2026-11-23T08:00:00.000000Z",
  space: DM_SPACE,
  user: GRACE,
  message: {
    name: "spaces/AAAAdm0001/messages/msg1.msg1",
    sender: GRACE,
    createTime: "2026-11-23T08:00:00.000000Z",
    text: "hello bot",
    argumentText: "hello bot",
    formattedText: "hello bot",
    thread: { name: "spaces/AAAAdm0001/threads/thr1" },
    space: DM_SPACE,
  },
};

/** A classic event: a message in a space that @mentions the app (a USER_MENTION annotation). */
const MENTION: chat_v1.Schema$DeprecatedEvent = {
  type: "MESSAGE",
  eventTime: "2026-11-23T08:01:00.000000Z",
  space: ROOM,
  user: GRACE,
  message: {
    name: "spaces/AAAAroom01/messages/msg2.msg2",
    sender: GRACE,
    text: "@baton what is new?",
    argumentText: " what is new?",
    annotations: [{
      type: "USER_MENTION",
      startIndex: 0,
      length: 6,
      userMention: { user: APP, type: "MENTION" },
    }],
    thread: { name: "spaces/AAAAroom01/threads/thr2" },
    space: ROOM,
  },
};

/** A classic CARD_CLICKED on one of baton's buttons, both action shapes filled as Chat does. */
function cardClicked(data: string): chat_v1.Schema$DeprecatedEvent {
  return {
    type: "CARD_CLICKED",
    eventTime: "2026-11-23T08:02:00.000000Z",
    space: ROOM,
    user: GRACE,
    message: {
      name: "spaces/AAAAroom01/messages/card1.card1",
      sender: APP,
      thread: { name: "spaces/AAAAroom01/threads/thr2" },
      space: ROOM,
    },
    action: {
      actionMethodName: GOOGLE_CHAT_CHOICE.function,
      parameters: [{ key: GOOGLE_CHAT_CHOICE.parameter, value: data }],
    },
    common: {
      hostApp: "CHAT",
      userLocale: "en",
      invokedFunction: GOOGLE_CHAT_CHOICE.function,
      parameters: { [GOOGLE_CHAT_CHOICE.parameter]: data },
    },
  };
}

// ── tokens, as google-auth-library verifies them ─────────────────────────────────────────────────

/** A token as Chat signs one for a project-number audience. */
function chatToken(over: Partial<TestClaims> & { key?: typeof KEY } = {}): Promise<string> {
  const { key = KEY, ...claims } = over;
  return signTestJwt(key, { issuer: GOOGLE_CHAT_ISSUER, audience: PROJECT, ...claims });
}

/** Google's check for a project-number audience (Chat's docs): Chat's certs, issuer, audience. */
async function googleAcceptsProjectToken(token: string): Promise<boolean> {
  try {
    await new OAuth2Client().verifySignedJwtWithCertsAsync(token, CERTS, PROJECT, [
      GOOGLE_CHAT_ISSUER,
    ]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Google's check for an endpoint-URL audience: `verifyIdToken` (Google's certs, fetched here from a
 * recording transport; its default issuers) and then the sample's email checks: the email is the
 * app's (Chat's, or for an add-on the service account email the Chat API configuration shows).
 */
async function googleAcceptsIdToken(
  token: string,
  emails: readonly string[] = [GOOGLE_CHAT_ISSUER],
): Promise<boolean> {
  const client = new OAuth2Client({
    transporterOptions: {
      fetchImplementation: () => Promise.resolve(Response.json(CERTS)),
    },
  });
  try {
    const ticket = await client.verifyIdToken({ idToken: token, audience: ENDPOINT });
    const payload = ticket.getPayload();
    return emails.includes(String(payload?.email)) && payload?.email_verified === true;
  } catch {
    return false;
  }
}

/**
 * Whether baton takes `token` for `audience` (keys from the same key pair, as Chat's JWKS), with
 * `more` settings (an add-on's project number).
 */
async function batonAccepts(
  token: string,
  audience: string,
  more: Record<string, string> = {},
): Promise<boolean> {
  let verdict: Awaited<ReturnType<typeof googleChatAdapter.verify>> = null;
  await withFetch(
    (call) =>
      call.url === JWKS ? Response.json({ keys: [KEY.jwk] }) : new Response(null, { status: 404 }),
    async () => {
      verdict = await googleChatAdapter.verify(raw(DM, token), { ...env(audience), ...more });
    },
  );
  assert(verdict === null || typeof verdict === "string", JSON.stringify(verdict));
  return verdict === null;
}

Deno.test("googleChatAdapter.verify() takes and refuses project-number tokens as google-auth-library's verifySignedJwtWithCertsAsync does", async () => {
  resetJwtCaches();
  const good = await chatToken();
  const [head, body, signature] = good.split(".");
  const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") +
    signature.slice(11);
  const now = Math.floor(Date.now() / 1000);
  const cases: [string, string, boolean][] = [
    ["Chat's token", good, true],
    ["expired two minutes ago (within the 300 s skew)", await chatToken({ lifetime: -120 }), true],
    ["wrong audience", await chatToken({ audience: "999999999999" }), false],
    ["the endpoint URL as audience", await chatToken({ audience: ENDPOINT }), false],
    ["wrong issuer", await chatToken({ issuer: "someone@else.iam.gserviceaccount.com" }), false],
    ["expired ten minutes ago", await chatToken({ lifetime: -600 }), false],
    ["issued ten minutes ahead", await chatToken({ now: now + 600 }), false],
    ["another key under Chat's kid", await chatToken({ key: IMPOSTOR }), false],
    ["unknown kid", await chatToken({ kid: "chat-key-9" }), false],
    ["tampered signature", `${head}.${body}.${flipped}`, false],
    ["tampered claims", `${head}.${tamper(body, { aud: PROJECT, sub: "x" })}.${signature}`, false],
    // google-auth-library requires iat and exp and refuses a lifetime past a day
    // (DEFAULT_MAX_TOKEN_LIFETIME_SECS_); baton did not (see the finding in google_chat.ts).
    ["lasting two days", await chatToken({ lifetime: 2 * 86_400 }), false],
    [
      "without iat",
      await unsigned({ iss: GOOGLE_CHAT_ISSUER, aud: PROJECT, exp: now + 600 }),
      false,
    ],
    ["without exp", await unsigned({ iss: GOOGLE_CHAT_ISSUER, aud: PROJECT, iat: now }), false],
  ];
  for (const [name, token, accepted] of cases) {
    assertStrictEquals(await googleAcceptsProjectToken(token), accepted, `google: ${name}`);
    assertStrictEquals(await batonAccepts(token, PROJECT), accepted, `baton: ${name}`);
  }
});

/** A JWT payload segment with `claims` changed (the signature left as it was). */
function tamper(segment: string, claims: Record<string, unknown>): string {
  const payload = JSON.parse(new TextDecoder().decode(base64url.decode(segment)));
  return base64url.encode(JSON.stringify({ ...payload, ...claims }));
}

/** A token with exactly `claims` (no iat/exp added), signed with Chat's key. */
function unsigned(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: "chat-key-1" })
    .sign(KEY.privateKey);
}

Deno.test("googleChatAdapter.verify() takes and refuses endpoint-URL ID tokens as google-auth-library's verifyIdToken and Chat's email check do", async () => {
  resetJwtCaches();
  const idToken = (claims: Record<string, unknown>, over: Partial<TestClaims> = {}) =>
    signTestJwt(KEY, {
      issuer: "https://accounts.google.com",
      audience: ENDPOINT,
      claims,
      ...over,
    });
  const chatClaims = { email: GOOGLE_CHAT_ISSUER, email_verified: true };
  const cases: [string, string, boolean][] = [
    ["Chat's ID token", await idToken(chatClaims), true],
    ["issuer without scheme", await idToken(chatClaims, { issuer: "accounts.google.com" }), true],
    ["wrong audience", await idToken(chatClaims, { audience: `${ENDPOINT}/other` }), false],
    ["wrong issuer", await idToken(chatClaims, { issuer: "https://evil.example" }), false],
    ["expired", await idToken(chatClaims, { lifetime: -600 }), false],
    [
      "another key",
      await signTestJwt(IMPOSTOR, {
        issuer: "https://accounts.google.com",
        audience: ENDPOINT,
        claims: chatClaims,
      }),
      false,
    ],
    [
      "another account's token",
      await idToken({ email: "x@gmail.com", email_verified: true }),
      false,
    ],
    [
      "unverified email",
      await idToken({ email: GOOGLE_CHAT_ISSUER, email_verified: false }),
      false,
    ],
    // A Workspace add-on's requests carry the add-on service agent's ID token: without
    // GOOGLE_CHAT_ADDON_PROJECT_NUMBER baton is a Chat API app and refuses it, as Chat's sample
    // check does (the "Workspace add-on shape" section below takes it for its project).
    [
      "a Workspace add-on's token",
      await idToken({
        email: `service-${PROJECT}@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`,
        email_verified: true,
      }),
      false,
    ],
  ];
  for (const [name, token, accepted] of cases) {
    assertStrictEquals(await googleAcceptsIdToken(token), accepted, `google: ${name}`);
    assertStrictEquals(await batonAccepts(token, ENDPOINT), accepted, `baton: ${name}`);
  }
});

// ── parsing both event shapes ───────────────────────────────────────────────────────────────────

function parse(event: unknown) {
  return googleChatAdapter.parse(raw(event, null), env(PROJECT));
}

Deno.test("googleChatAdapter.parse() takes schema-typed MESSAGE events: a DM, and a space mention without the mention", () => {
  const dm = parse(DM);
  assert(dm.kind === "message", JSON.stringify(dm));
  assertStrictEquals(dm.message.text, "hello bot");
  assertStrictEquals(dm.message.sessionKey, "google-chat:spaces/AAAAdm0001");
  assertEquals(dm.message.reply, {
    platform: "google-chat",
    space: "spaces/AAAAdm0001",
    thread: "spaces/AAAAdm0001/threads/thr1",
  });
  const room = parse(MENTION);
  assert(room.kind === "message", JSON.stringify(room));
  assertStrictEquals(room.message.text, "what is new?");
  assertStrictEquals(room.message.sessionKey, "google-chat:spaces/AAAAroom01/threads/thr2");
  assertStrictEquals(room.message.sender.direct, false);
  // Another app's message is never a turn.
  assertStrictEquals(parse({ ...DM, user: APP }).kind, "respond");
});

Deno.test("googleChatAdapter.parse() takes a schema-typed CARD_CLICKED on baton's button as the clicker's choice", () => {
  const [choice] = approvalButtons(7, "call_abc");
  const click = parse(cardClicked(choice.data));
  assert(click.kind === "choice", JSON.stringify(click));
  assertStrictEquals(click.choice.data, choice.data);
  assertStrictEquals(click.choice.sender.user, "users/1111");
  assertStrictEquals(click.choice.sessionKey, "google-chat:spaces/AAAAroom01/threads/thr2");
  // The older shape alone (no `common`) is the same click.
  const legacy = parse({ ...cardClicked(choice.data), common: undefined });
  assert(legacy.kind === "choice");
  assertStrictEquals(legacy.choice.data, choice.data);
});

// ── what baton sends, against @googleapis/chat's client and schema ──────────────────────────────

const MESSAGE_KEYS: KeyTable<chat_v1.Schema$Message> = {
  accessoryWidgets: true,
  actionResponse: true,
  annotations: true,
  argumentText: true,
  attachedGifs: true,
  attachment: true,
  cards: true,
  cardsV2: true,
  clientAssignedMessageId: true,
  createTime: true,
  deleteTime: true,
  deletionMetadata: true,
  emojiReactionSummaries: true,
  fallbackText: true,
  formattedText: true,
  lastUpdateTime: true,
  matchedUrl: true,
  name: true,
  privateMessageViewer: true,
  quotedMessageMetadata: true,
  sender: true,
  silent: true,
  slashCommand: true,
  space: true,
  text: true,
  thread: true,
  threadReply: true,
};
const THREAD_KEYS: KeyTable<chat_v1.Schema$Thread> = { name: true, threadKey: true };
const CARD_WITH_ID_KEYS: KeyTable<chat_v1.Schema$CardWithId> = { card: true, cardId: true };
const CARD_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Card> = {
  cardActions: true,
  displayStyle: true,
  expressionData: true,
  fixedFooter: true,
  header: true,
  name: true,
  peekCardHeader: true,
  sectionDividerStyle: true,
  sections: true,
};
const SECTION_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Section> = {
  collapseControl: true,
  collapsible: true,
  header: true,
  id: true,
  uncollapsibleWidgetsCount: true,
  widgets: true,
};
const WIDGET_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Widget> = {
  buttonList: true,
  carousel: true,
  chipList: true,
  columns: true,
  dateTimePicker: true,
  decoratedText: true,
  divider: true,
  eventActions: true,
  grid: true,
  horizontalAlignment: true,
  id: true,
  image: true,
  selectionInput: true,
  textInput: true,
  textParagraph: true,
  visibility: true,
};
const BUTTON_LIST_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1ButtonList> = { buttons: true };
const BUTTON_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Button> = {
  altText: true,
  color: true,
  disabled: true,
  icon: true,
  onClick: true,
  text: true,
  type: true,
};
const ON_CLICK_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1OnClick> = {
  action: true,
  card: true,
  openDynamicLinkAction: true,
  openLink: true,
  overflowMenu: true,
};
const ACTION_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Action> = {
  allWidgetsAreRequired: true,
  function: true,
  interaction: true,
  loadIndicator: true,
  parameters: true,
  persistValues: true,
  requiredWidgets: true,
};
const PARAMETER_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1ActionParameter> = {
  key: true,
  value: true,
};
const ACTION_RESPONSE_KEYS: KeyTable<chat_v1.Schema$ActionResponse> = {
  dialogAction: true,
  type: true,
  updatedWidget: true,
  url: true,
};
const USER_KEYS: KeyTable<chat_v1.Schema$User> = {
  displayName: true,
  domainId: true,
  isAnonymous: true,
  name: true,
  type: true,
};
/**
 * `spaces.messages.create`'s own parameters: its declaration less the standard ones every method
 * takes (`StandardParameters`, not exported: named here) that baton never sends.
 */
type CreateParams = Omit<
  chat_v1.Params$Resource$Spaces$Messages$Create,
  | "auth"
  | "$.xgafv"
  | "access_token"
  | "alt"
  | "callback"
  | "fields"
  | "key"
  | "oauth_token"
  | "prettyPrint"
  | "quotaUser"
  | "uploadType"
  | "upload_protocol"
>;
const CREATE_KEYS: KeyTable<CreateParams> = {
  "createMessageNotificationOptions.notificationType": true,
  messageId: true,
  messageReplyOption: true,
  parent: true,
  requestId: true,
  threadKey: true,
  requestBody: true,
};
/** messageReplyOption's values (Chat API reference). */
const REPLY_OPTIONS = [
  "MESSAGE_REPLY_OPTION_UNSPECIFIED",
  "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
  "REPLY_MESSAGE_OR_FAIL",
];
/** GoogleAppsCardV1Button.type's values (Cards v2 reference; unset is OUTLINED). */
const BUTTON_TYPES = ["TYPE_UNSPECIFIED", "OUTLINED", "FILLED", "FILLED_TONAL", "BORDERLESS"];

/** Checks a `cardsV2` entry recursively, down to each button's action parameters. */
function assertCard(entry: unknown): void {
  assertDeclaredKeys<chat_v1.Schema$CardWithId>("cardsV2[]", entry, CARD_WITH_ID_KEYS, [
    "cardId",
    "card",
  ]);
  const { card } = entry as chat_v1.Schema$CardWithId;
  // "A card. Maximum size is 32 KB."
  assert(new TextEncoder().encode(JSON.stringify(card)).length <= 32 * 1024);
  assertDeclaredKeys<chat_v1.Schema$GoogleAppsCardV1Card>("card", card, CARD_KEYS, ["sections"]);
  for (const section of card?.sections ?? []) {
    assertDeclaredKeys("section", section, SECTION_KEYS, ["widgets"]);
    for (const widget of section.widgets ?? []) {
      assertDeclaredKeys("widget", widget, WIDGET_KEYS);
      if (!widget.buttonList) continue;
      assertDeclaredKeys("buttonList", widget.buttonList, BUTTON_LIST_KEYS, ["buttons"]);
      for (const button of widget.buttonList.buttons ?? []) {
        assertDeclaredKeys("button", button, BUTTON_KEYS, ["text", "onClick"]);
        if (button.type) assert(BUTTON_TYPES.includes(button.type), button.type);
        assertDeclaredKeys("onClick", button.onClick, ON_CLICK_KEYS, ["action"]);
        assertDeclaredKeys("action", button.onClick?.action, ACTION_KEYS, ["function"]);
        for (const parameter of button.onClick?.action?.parameters ?? []) {
          assertDeclaredKeys("parameter", parameter, PARAMETER_KEYS, ["key", "value"]);
        }
      }
    }
  }
}

const SERVICE_ACCOUNT = await testServiceAccount();
const TOKEN_URL = "https://oauth2.googleapis.com/token";
const ROOT = "http://chat.test/";
const OUT_ENV = {
  ...env(PROJECT),
  GOOGLE_CHAT_SERVICE_ACCOUNT: SERVICE_ACCOUNT.json,
  GOOGLE_CHAT_API_ROOT: `${ROOT}v1`,
};

/** Answers the token endpoint and the Chat API, recording (no network). */
function google(call: FetchCall): Response {
  if (call.url === TOKEN_URL) {
    return Response.json({ access_token: "ya29.token", expires_in: 3599, token_type: "Bearer" });
  }
  return Response.json({ name: "spaces/AAAAroom01/messages/sent1" });
}

/**
 * What @googleapis/chat's own client requests for `spaces.messages.create(params)`: its URL (path
 * and query) and body, through a recording transport.
 */
async function officialCreate(params: chat_v1.Params$Resource$Spaces$Messages$Create) {
  const seen: { url: URL; body: unknown }[] = [];
  // The client's own copy of google-auth-library (googleapis-common's), as its `auth` expects.
  const auth = new googleapisAuth.OAuth2({
    transporterOptions: {
      fetchImplementation: (input: string | URL | Request, init?: RequestInit) => {
        seen.push({ url: new URL(String(input)), body: JSON.parse(String(init?.body)) });
        return Promise.resolve(Response.json({ name: "spaces/x/messages/y" }));
      },
    },
  });
  auth.setCredentials({ access_token: "ya29.token", expiry_date: Date.now() + 3_600_000 });
  await chat({ version: "v1", auth, rootUrl: ROOT }).spaces.messages.create(params);
  assertStrictEquals(seen.length, 1);
  return seen[0];
}

/** Sorted query pairs: the order of query parameters means nothing. */
function query(url: URL): [string, string][] {
  return [...url.searchParams].sort(([a], [b]) => a.localeCompare(b));
}

Deno.test("googleChatAdapter.send() creates messages as @googleapis/chat's client does, with only schema fields and documented parameters", async () => {
  resetJwtCaches();
  const choices = approvalButtons(7, "call_abc");
  const targets: GoogleChatTarget[] = [
    {
      platform: "google-chat",
      space: "spaces/AAAAroom01",
      thread: "spaces/AAAAroom01/threads/thr2",
    },
    { platform: "google-chat", space: "spaces/AAAAdm0001" },
  ];
  let sent: FetchCall[] = [];
  await withFetch(google, async (calls) => {
    for (const target of targets) {
      assertEquals(
        await googleChatAdapter.send(
          target,
          "part one",
          { index: 0, count: 2, marker: "m1" },
          OUT_ENV,
        ),
        { ok: true },
      );
      assertEquals(
        await googleChatAdapter.send(target, "Run it?", {
          index: 1,
          count: 2,
          marker: "m2",
          choices,
        }, OUT_ENV),
        { ok: true },
      );
    }
    sent = calls.filter((c) => c.url !== TOKEN_URL);
  });
  assertStrictEquals(sent.length, 4);
  for (const [i, call] of sent.entries()) {
    const target = targets[Math.floor(i / 2)];
    const url = new URL(call.url);
    assertStrictEquals(call.method, "POST");
    assertStrictEquals(call.headers.get("authorization"), "Bearer ya29.token");
    // Query parameters: create's own, with documented values.
    const params = Object.fromEntries(url.searchParams);
    assertDeclaredKeys<CreateParams>("create parameters", params, CREATE_KEYS);
    assert(/^client-[a-z0-9-]{1,56}$/.test(params.messageId), params.messageId);
    assert(params.requestId.length > 0);
    if (params.messageReplyOption) assert(REPLY_OPTIONS.includes(params.messageReplyOption));
    // The body: Message fields only, the thread and cards checked down to the buttons.
    assertDeclaredKeys<chat_v1.Schema$Message>("message", call.body, MESSAGE_KEYS, ["text"]);
    if (call.body.thread) assertDeclaredKeys("thread", call.body.thread, THREAD_KEYS, ["name"]);
    for (const card of call.body.cardsV2 ?? []) assertCard(card);
    // The official client, given the same parameters and body, makes the same request.
    const official = await officialCreate({
      parent: target.space,
      ...params,
      requestBody: call.body,
    });
    assertStrictEquals(url.pathname, official.url.pathname);
    assertEquals(query(url), query(official.url));
    assertEquals(call.body, official.body);
  }
  assertStrictEquals(sent[1].body.cardsV2.length, 1);
  assertEquals(
    sent[1].body.cardsV2[0].card.sections[0].widgets[0].buttonList.buttons.map(
      (b: chat_v1.Schema$GoogleAppsCardV1Button) => b.onClick?.action?.parameters?.[0].value,
    ),
    choices.map((c) => c.data),
  );
  // A reply in a thread says so; a DM message names no thread.
  assertStrictEquals(new URL(sent[0].url).searchParams.get("messageReplyOption"), REPLY_OPTIONS[1]);
  assertStrictEquals(new URL(sent[2].url).searchParams.get("messageReplyOption"), null);
});

Deno.test("googleChatAdapter.answerChoice() answers a click with a Message the schema declares", async () => {
  const [choice] = approvalButtons(7, "call_abc");
  const click = parse(cardClicked(choice.data));
  assert(click.kind === "choice");
  const answer = await googleChatAdapter.answerChoice!(
    click.choice,
    { kind: "not_yours" },
    OUT_ENV,
  );
  const body = answer.body as chat_v1.Schema$Message;
  assertDeclaredKeys<chat_v1.Schema$Message>("answer", body, MESSAGE_KEYS, ["text"]);
  assertDeclaredKeys("actionResponse", body.actionResponse, ACTION_RESPONSE_KEYS, ["type"]);
  assertStrictEquals(body.actionResponse?.type, "NEW_MESSAGE");
  assertDeclaredKeys("privateMessageViewer", body.privateMessageViewer, USER_KEYS, ["name"]);
});

Deno.test("googleChatAdapter.send() asks for its token as google-auth-library's JWT client does: JWT-bearer grant, same claims", async () => {
  // google-auth-library's service-account client, through a recording transport.
  let official = new URLSearchParams();
  const client = new JWT({
    email: SERVICE_ACCOUNT.email,
    key: SERVICE_ACCOUNT.privateKeyPem,
    scopes: ["https://www.googleapis.com/auth/chat.bot"],
    transporterOptions: {
      fetchImplementation: (_input: string | URL | Request, init?: RequestInit) => {
        official = new URLSearchParams(String(init?.body));
        return Promise.resolve(Response.json({ access_token: "t", expires_in: 3600 }));
      },
    },
  });
  await client.authorize();

  resetJwtCaches();
  let token: FetchCall | undefined;
  const defaultEnv = { ...OUT_ENV, GOOGLE_CHAT_TOKEN_URL: undefined };
  await withFetch(google, async (calls) => {
    await googleChatAdapter.send(
      { platform: "google-chat", space: "spaces/AAAAdm0001" },
      "x",
      { index: 0, count: 1 },
      defaultEnv,
    );
    token = calls[0];
  });
  assert(token);
  assertStrictEquals(token.url, TOKEN_URL); // gtoken's GOOGLE_TOKEN_URL
  assertStrictEquals(token.method, "POST");
  const form = new URLSearchParams(String(token.init.body));
  assertEquals([...form.keys()].sort(), [...official.keys()].sort());
  assertStrictEquals(form.get("grant_type"), official.get("grant_type"));
  assertStrictEquals(form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");

  const ours = decodeJwt(form.get("assertion")!);
  const theirs = decodeJwt(official.get("assertion")!);
  for (const claim of ["iss", "scope", "aud"]) {
    assertStrictEquals(ours[claim], theirs[claim], claim);
  }
  assertStrictEquals(ours.exp! - ours.iat!, theirs.exp! - theirs.iat!);
  // baton adds `sub` (the service account itself, which Google takes as no delegation); gtoken
  // sends it only for domain-wide delegation. Every other claim is the same set.
  assertEquals(Object.keys(ours).filter((k) => k !== "sub").sort(), Object.keys(theirs).sort());
  assertStrictEquals(ours.sub, SERVICE_ACCOUNT.email);
  assertStrictEquals(decodeProtectedHeader(form.get("assertion")!).alg, "RS256");
  assertStrictEquals(decodeProtectedHeader(official.get("assertion")!).alg, "RS256");
});

// ── Workspace add-on shape ──────────────────────────────────────────────────────────────────────
// A Chat app built as a Google Workspace add-on is called with the add-ons event object and an ID
// token of its project's add-on service agent for the endpoint URL ("Verify requests from Google
// Chat", https://developers.google.com/workspace/chat/verify-requests-from-chat), and answers in
// the add-on's envelope (the add-ons endpoint interface,
// https://developers.google.com/workspace/add-ons/reference/callback-contract; Google's samples in
// googleworkspace/add-ons-samples node/chat/*).

const AGENT = googleChatAddOnAgent(PROJECT);
const ADD_ON_ENV = { ...env(ENDPOINT), GOOGLE_CHAT_ADDON_PROJECT_NUMBER: PROJECT };

/**
 * The add-on event object as far as @googleapis/chat types its parts (`CommonEventObject`,
 * `Message`, `Space`, `User`): it declares no envelope (no add-ons package is a dependency).
 */
interface AddOnEvent {
  commonEventObject: chat_v1.Schema$CommonEventObject;
  authorizationEventObject: { systemIdToken: string };
  chat: {
    user: chat_v1.Schema$User;
    eventTime: string;
    messagePayload?: { space: chat_v1.Schema$Space; message: chat_v1.Schema$Message };
    buttonClickedPayload?: { space: chat_v1.Schema$Space; message: chat_v1.Schema$Message };
    addedToSpacePayload?: { space: chat_v1.Schema$Space };
  };
}

/** An ID token as Google signs one for the add-on agent `email` (default this project's). */
function addOnToken(over: Partial<TestClaims> = {}, email = AGENT): Promise<string> {
  return signTestJwt(KEY, {
    issuer: "https://accounts.google.com",
    audience: ENDPOINT,
    claims: { email, email_verified: true },
    ...over,
  });
}

/**
 * The add-on event for what a Chat API app gets as `classic` (same space, message, user, time):
 * a `MESSAGE` as `messagePayload`, a `CARD_CLICKED` as `buttonClickedPayload` with the button's
 * parameters in `commonEventObject.parameters` (and no `invokedFunction`: not filled in for Chat
 * add-ons, per CommonEventObject's own doc in @googleapis/chat).
 */
function addOnOf(classic: chat_v1.Schema$DeprecatedEvent): AddOnEvent {
  const payload = { space: classic.space!, message: classic.message! };
  return {
    commonEventObject: {
      hostApp: "CHAT",
      platform: "WEB",
      ...(classic.type === "CARD_CLICKED" ? { parameters: classic.common?.parameters ?? {} } : {}),
    },
    authorizationEventObject: { systemIdToken: "eyJhbGciOiJSUzI1NiJ9.e30.sig" },
    chat: {
      user: classic.user!,
      eventTime: classic.eventTime!,
      ...(classic.type === "CARD_CLICKED"
        ? { buttonClickedPayload: payload }
        : { messagePayload: payload }),
    },
  };
}

Deno.test("googleChatAdapter.verify() takes an add-on's ID token for its project as google-auth-library's verifyIdToken and the agent email check do, and refuses the rest", async () => {
  resetJwtCaches();
  const other = googleChatAddOnAgent("999999999999");
  const cases: [string, string, boolean][] = [
    ["the add-on agent's token", await addOnToken(), true],
    ["issuer without scheme", await addOnToken({ issuer: "accounts.google.com" }), true],
    // Chat API apps' tokens still pass with the add-on configured.
    [
      "Chat's own ID token",
      await addOnToken({}, GOOGLE_CHAT_ISSUER),
      true,
    ],
    ["another project's add-on agent", await addOnToken({}, other), false],
    ["another account", await addOnToken({}, "x@gmail.com"), false],
    ["wrong audience", await addOnToken({ audience: `${ENDPOINT}/other` }), false],
    ["the project number as audience", await addOnToken({ audience: PROJECT }), false],
    ["expired", await addOnToken({ lifetime: -600 }), false],
    ["wrong issuer", await addOnToken({ issuer: "https://evil.example" }), false],
    [
      "unverified email",
      await signTestJwt(KEY, {
        issuer: "https://accounts.google.com",
        audience: ENDPOINT,
        claims: { email: AGENT, email_verified: false },
      }),
      false,
    ],
    [
      "another key",
      await signTestJwt(IMPOSTOR, {
        issuer: "https://accounts.google.com",
        audience: ENDPOINT,
        claims: { email: AGENT, email_verified: true },
      }),
      false,
    ],
  ];
  const expected = [AGENT, GOOGLE_CHAT_ISSUER];
  for (const [name, token, accepted] of cases) {
    assertStrictEquals(await googleAcceptsIdToken(token, expected), accepted, `google: ${name}`);
    assertStrictEquals(
      await batonAccepts(token, ENDPOINT, { GOOGLE_CHAT_ADDON_PROJECT_NUMBER: PROJECT }),
      accepted,
      `baton: ${name}`,
    );
  }
  // The agent's token is only taken for the project configured, and only with a URL audience.
  const agent = await addOnToken();
  assertStrictEquals(await batonAccepts(agent, ENDPOINT), false, "no project configured");
  assertStrictEquals(
    await batonAccepts(agent, ENDPOINT, { GOOGLE_CHAT_ADDON_PROJECT_NUMBER: "999999999999" }),
    false,
    "another project configured",
  );
  assertStrictEquals(
    await batonAccepts(agent, ENDPOINT, { GOOGLE_CHAT_ADDON_PROJECT_NUMBER: "not a number" }),
    false,
    "a project number that is not one",
  );
});

Deno.test("googleChatAdapter.parse() takes an add-on's messagePayload as the same message a MESSAGE event is: DM, and space mention", () => {
  for (const classic of [DM, MENTION]) {
    const addOn = parse(addOnOf(classic));
    assert(addOn.kind === "message", JSON.stringify(addOn));
    // Same session key (DM / thread in a space), delivery key, text, context, reply and sender.
    assertEquals(addOn, parse(classic));
  }
  // Another app's message is never a turn; an empty one neither.
  const fromApp = addOnOf(DM);
  fromApp.chat.user = APP;
  assertEquals(parse(fromApp), { kind: "respond", status: 200, body: {} });
  const empty = addOnOf({ ...DM, message: { ...DM.message, text: " ", argumentText: " " } });
  assertEquals(parse(empty), { kind: "respond", status: 200, body: {} });
});

Deno.test("googleChatAdapter.parse() takes an add-on's buttonClickedPayload on baton's button as the same choice a CARD_CLICKED is", () => {
  const [choice] = approvalButtons(7, "call_abc");
  const classic = parse(cardClicked(choice.data));
  const addOn = parse(addOnOf(cardClicked(choice.data)));
  assert(classic.kind === "choice" && addOn.kind === "choice", JSON.stringify(addOn));
  // The same click (session, delivery key, clicker, data), answered as an add-on (its handle).
  const { handle, ...rest } = addOn.choice;
  assertEquals(rest, classic.choice);
  assertStrictEquals(handle, "add-on");
  // Another button's parameters, an app's click: acknowledged.
  const foreign = addOnOf(cardClicked(choice.data));
  foreign.commonEventObject.parameters = { actionName: "openDialog" };
  assertEquals(parse(foreign), { kind: "respond", status: 200, body: {} });
  const byApp = addOnOf(cardClicked(choice.data));
  byApp.chat.user = APP;
  assertEquals(parse(byApp), { kind: "respond", status: 200, body: {} });
});

Deno.test("googleChatAdapter.parse() acknowledges an add-on's other payloads ({}) and refuses a malformed one", () => {
  const added: AddOnEvent = {
    commonEventObject: { hostApp: "CHAT" },
    authorizationEventObject: { systemIdToken: "x" },
    chat: { user: GRACE, eventTime: "2026-11-23T08:03:00Z", addedToSpacePayload: { space: ROOM } },
  };
  assertEquals(parse(added), { kind: "respond", status: 200, body: {} });
  const broken = addOnOf(DM);
  broken.chat.messagePayload!.message = { ...DM.message, name: "not/a/message" };
  let threw = false;
  try {
    parse(broken);
  } catch (e) {
    threw = e instanceof PayloadError;
  }
  assert(threw, "a malformed add-on message is a PayloadError (400)");
});

Deno.test("googleChatAdapter.answerChoice() answers an add-on's click in the add-on envelope: a schema Message in createMessageAction", async () => {
  const [choice] = approvalButtons(7, "call_abc");
  const click = parse(addOnOf(cardClicked(choice.data)));
  assert(click.kind === "choice");
  const answer = await googleChatAdapter.answerChoice!(
    click.choice,
    { kind: "not_yours" },
    ADD_ON_ENV,
  );
  assertStrictEquals(answer.status, 200);
  const body = answer.body as {
    hostAppDataAction?: { chatDataAction?: { createMessageAction?: { message?: unknown } } };
  };
  assertEquals(Object.keys(body), ["hostAppDataAction"]);
  assertEquals(Object.keys(body.hostAppDataAction!), ["chatDataAction"]);
  assertEquals(Object.keys(body.hostAppDataAction!.chatDataAction!), ["createMessageAction"]);
  const message = body.hostAppDataAction!.chatDataAction!.createMessageAction!.message;
  assertDeclaredKeys<chat_v1.Schema$Message>("add-on answer", message, MESSAGE_KEYS, ["text"]);
  const typed = message as chat_v1.Schema$Message;
  assertStrictEquals(typed.text, approvalClickText({ kind: "not_yours" }));
  // An add-on's message has no actionResponse; in a space only the clicker sees it.
  assertStrictEquals(typed.actionResponse, undefined);
  assertDeclaredKeys("privateMessageViewer", typed.privateMessageViewer, USER_KEYS, ["name"]);
  assertStrictEquals(typed.privateMessageViewer?.name, GRACE.name);
});

Deno.test("googleChatAdapter.send() gives an add-on's card buttons its endpoint URL as the function, still a schema card", async () => {
  resetJwtCaches();
  const choices = approvalButtons(7, "call_abc");
  const target: GoogleChatTarget = { platform: "google-chat", space: "spaces/AAAAroom01" };
  const sent: FetchCall[] = [];
  for (const vars of [{ ...OUT_ENV, ...ADD_ON_ENV }, OUT_ENV]) {
    await withFetch(google, async (calls) => {
      const part = { index: 0, count: 1, marker: "m-add-on", choices };
      assertEquals(await googleChatAdapter.send(target, "Run it?", part, vars), { ok: true });
      sent.push(...calls.filter((c) => c.url !== TOKEN_URL));
    });
  }
  assertStrictEquals(sent.length, 2);
  const functions = sent.map((call) => {
    for (const card of call.body.cardsV2) assertCard(card);
    const buttons: chat_v1.Schema$GoogleAppsCardV1Button[] =
      call.body.cardsV2[0].card.sections[0].widgets[0].buttonList.buttons;
    return [...new Set(buttons.map((b) => b.onClick?.action?.function))];
  });
  assertEquals(functions, [[ENDPOINT], [GOOGLE_CHAT_CHOICE.function]]);
});

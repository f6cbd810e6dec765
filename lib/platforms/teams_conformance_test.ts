// Conformance: the Teams adapter against botframework-connector's token validation, Bot Connector client and MSAL token request, botframework-schema's types and the adaptivecards parser; Deno (tests only).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
// Both come with the official packages (botframework-schema depends on adaptivecards,
// botframework-connector on @azure/msal-node): the card parser and the token client they use.
import * as AdaptiveCards from "adaptivecards";
import { ConfidentialClientApplication } from "@azure/msal-node";
import {
  AuthenticationConstants,
  ChannelValidation,
  ConnectorClient,
  JwtTokenValidation,
  MicrosoftAppCredentials,
  MsalAppCredentials,
  SimpleCredentialProvider,
} from "botframework-connector";
import {
  type Activity,
  type AdaptiveCardInvokeValue,
  type Attachment,
  type ChannelAccount,
  type ConversationAccount,
  type Mention,
  type TeamsChannelData,
  TextFormatTypes,
} from "botframework-schema";
import { base64url, exportPKCS8, importPKCS8, SignJWT } from "jose";
import { approvalClickText, type RawRequest } from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { TEAMS_ISSUER, teamsAdapter, type TeamsTarget } from "./teams.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { signTestJwt, type TestClaims, testSigningKey } from "./_jwt_fixtures.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const APP_ID = "8e2f1d6a-3b1c-4f0e-9a7d-5c6b4a3f2e1d";
const PASSWORD = "teams-app-password-0123456789";
const SERVICE_URL = "https://smba.trafficmanager.net/amer/";
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";

// ── the platform on loopback: OpenID metadata, keys, and a Bot Connector that records ───────────

/** A Bot Framework signing key as Microsoft publishes them: JWK with `endorsements`. */
const KEY = await testSigningKey("bf-key-1", { endorsements: ["msteams", "webchat"] });
/** Another private key under the same key id: its signatures must not verify. */
const IMPOSTOR = await testSigningKey("bf-key-1", { endorsements: ["msteams"] });
/** A key endorsed for another channel only. */
const WEBCHAT_ONLY = await testSigningKey("bf-key-2", { endorsements: ["webchat"] });
/** A key with no endorsements at all (see the disagreement test). */
const BARE = await testSigningKey("bf-key-3");

/**
 * The key as published: without `alg` (botframework-connector's OpenIdMetadata reads only
 * kid/n/e/endorsements, so nothing says the published set carries one, and jose must cope).
 */
function published(key: typeof KEY): Record<string, unknown> {
  const { alg: _alg, ...jwk } = key.jwk;
  return jwk;
}

/** What the loopback Bot Connector received: method, path and query, parsed JSON body. */
const received: { method: string; url: string; body: unknown }[] = [];
const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen() {},
}, async (req): Promise<Response> => {
  const url = new URL(req.url);
  if (url.pathname === "/v1/.well-known/openidconfiguration") {
    return Response.json({
      issuer: TEAMS_ISSUER,
      jwks_uri: `${ORIGIN}/v1/keys`,
      id_token_signing_alg_values_supported: ["RS256"],
      token_endpoint_auth_methods_supported: ["private_key_jwt"],
    });
  }
  if (url.pathname === "/v1/keys") {
    return Response.json({ keys: [KEY, WEBCHAT_ONLY, BARE].map(published) });
  }
  const text = await req.text();
  received.push({
    method: req.method,
    url: url.pathname + url.search,
    body: text ? JSON.parse(text) : null,
  });
  return Response.json({ id: "1:sent" }, { status: 201 });
});
server.unref(); // the file's tests end the process; the listener must not hold it
const ORIGIN: string = `http://127.0.0.1:${server.addr.port}`;
const OPENID = `${ORIGIN}/v1/.well-known/openidconfiguration`;
const ENV = { TEAMS_APP_ID: APP_ID, TEAMS_APP_PASSWORD: PASSWORD, TEAMS_OPENID_URL: OPENID };

// botframework-connector caches metadata per URL for the process; a loopback URL of this run's
// own port is one no other file shares.
ChannelValidation.OpenIdMetadataEndpoint = OPENID;

// node-fetch and node:http keep-alive sockets outlive a test: the sanitizers would call them leaks.
const NODE_HTTP = { sanitizeOps: false, sanitizeResources: false };

// ── activities as the Bot Connector posts them, typed with botframework-schema ──────────────────

/**
 * An incoming activity: the schema's `Activity`, less the members its declaration requires but no
 * channel sends (`localTimezone`, `callerId`, `label`, `valueType`, `listenFor`, and a personal
 * conversation's `name`/`isGroup`); every member given is checked against the declaration.
 */
type Incoming =
  & Omit<Partial<Activity>, "conversation">
  & Pick<Activity, "type" | "id" | "serviceUrl" | "channelId" | "from" | "recipient">
  & { conversation: Pick<ConversationAccount, "id"> & Partial<ConversationAccount> };

const BOT: ChannelAccount = { id: `28:${APP_ID}`, name: "baton" };
const ADA: ChannelAccount = { id: "29:1ada-abc", name: "Ada Lovelace", aadObjectId: "aad-ada" };
const TEAMS_DATA: TeamsChannelData = { tenant: { id: TENANT } };

/** A message in a personal chat with the bot. */
const PERSONAL: Incoming = {
  type: "message",
  id: "1700000000001",
  timestamp: new Date("2026-11-23T08:00:00.000Z"),
  localTimestamp: new Date("2026-11-23T09:00:00.000+01:00"),
  serviceUrl: SERVICE_URL,
  channelId: "msteams",
  from: ADA,
  conversation: { conversationType: "personal", tenantId: TENANT, id: "a:1personal-chat" },
  recipient: BOT,
  textFormat: TextFormatTypes.Plain,
  locale: "en-US",
  text: "hello bot",
  entities: [{ type: "clientInfo", locale: "en-US", country: "US", platform: "Web" }],
  channelData: TEAMS_DATA,
};

const MENTION: Mention = { type: "mention", text: "<at>baton</at>", mentioned: BOT };

/** A group chat message that @mentions the bot: `<at>` markup in the text, a `mention` entity. */
const GROUP_CHAT: Incoming = {
  ...PERSONAL,
  id: "1700000000002",
  conversation: {
    conversationType: "groupChat",
    isGroup: true,
    tenantId: TENANT,
    id: "19:group-chat-1@thread.v2",
  },
  text: "<at>baton</at> summarise this chat\n",
  entities: [MENTION],
};

const CHANNEL_DATA: TeamsChannelData = {
  tenant: { id: TENANT },
  team: { id: "19:team-general@thread.tacv2", name: "Research" },
  channel: { id: "19:team-general@thread.tacv2", name: "General" },
};

/** A channel post that @mentions the bot: the conversation id names the thread. */
const CHANNEL: Incoming = {
  ...GROUP_CHAT,
  id: "1700000000003",
  conversation: {
    conversationType: "channel",
    isGroup: true,
    tenantId: TENANT,
    id: "19:team-general@thread.tacv2;messageid=1700000000000",
    name: "General",
  },
  text: "<at>baton</at> what is new?",
  channelData: CHANNEL_DATA,
};

function raw(activity: unknown, token: string | null): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    }),
    body: new TextEncoder().encode(JSON.stringify(activity)),
    url: "https://baton.test/webhooks/teams",
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

// ── tokens as the Bot Connector signs them ──────────────────────────────────────────────────────

/**
 * A token the Bot Connector's way: issuer `https://api.botframework.com`, audience the bot's app
 * id, the service URL in the lowercase `serviceurl` claim (`AuthenticationConstants.ServiceUrlClaim`).
 * Times are the real clock's: botframework-connector reads no other.
 */
function connectorToken(
  over: Partial<TestClaims> & { key?: typeof KEY; serviceurl?: string } = {},
): Promise<string> {
  const { key = KEY, serviceurl = SERVICE_URL, ...claims } = over;
  return signTestJwt(key, {
    issuer: AuthenticationConstants.ToBotFromChannelTokenIssuer,
    audience: APP_ID,
    claims: { [AuthenticationConstants.ServiceUrlClaim]: serviceurl, ...claims.claims },
    ...claims,
  });
}

/** Whether botframework-connector's own request authentication accepts `token` for `activity`. */
async function connectorAccepts(activity: Partial<Activity> | Incoming, token: string) {
  const quiet = console.error; // it logs each refusal's stack
  console.error = () => {};
  try {
    const identity = await JwtTokenValidation.authenticateRequest(
      // Its parameter is `Partial<Activity>`; an `Incoming` is one but for the conversation's
      // declared-required members, which authentication never reads.
      activity as Partial<Activity>,
      `Bearer ${token}`,
      new SimpleCredentialProvider(APP_ID, PASSWORD),
      "", // public Azure: ChannelValidation with OpenIdMetadataEndpoint
    );
    return identity.isAuthenticated;
  } catch {
    return false;
  } finally {
    console.error = quiet;
  }
}

/** Whether baton's adapter accepts the same request; a key fetch failure fails the test. */
async function batonAccepts(activity: unknown, token: string): Promise<boolean> {
  const verdict = await teamsAdapter.verify(raw(activity, token), ENV);
  assert(verdict === null || typeof verdict === "string", JSON.stringify(verdict));
  return verdict === null;
}

Deno.test({
  name:
    "teamsAdapter.verify() accepts a token signed the Bot Connector's way (serviceurl claim), as botframework-connector does",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    for (const activity of [PERSONAL, GROUP_CHAT, CHANNEL]) {
      const token = await connectorToken({ serviceurl: activity.serviceUrl });
      assert(await connectorAccepts(activity, token), `botframework-connector: ${activity.id}`);
      // Before the fix the adapter read `serviceUrl` and refused every one of these.
      assert(await batonAccepts(activity, token), `baton: ${activity.id}`);
    }
  },
});

/** A JWT payload segment with `claims` changed (the signature left as it was). */
function tamper(segment: string, claims: Record<string, unknown>): string {
  const payload = JSON.parse(new TextDecoder().decode(base64url.decode(segment)));
  return base64url.encode(JSON.stringify({ ...payload, ...claims }));
}

Deno.test({
  name:
    "teamsAdapter.verify() refuses every token botframework-connector refuses: aud, iss, time, endorsement, serviceurl, key, signature",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    const good = await connectorToken();
    const [head, body, signature] = good.split(".");
    const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") +
      signature.slice(11);
    const cases: [string, string, Incoming][] = [
      ["wrong audience", await connectorToken({ audience: "another-bot-app-id" }), PERSONAL],
      // Not an emulator issuer (those take another path); a near miss of the real one.
      ["wrong issuer", await connectorToken({ issuer: `${TEAMS_ISSUER}/` }), PERSONAL],
      ["expired beyond 5 minutes", await connectorToken({ lifetime: -400 }), PERSONAL],
      [
        "not valid for another 10 minutes",
        await connectorToken({ now: Math.floor(Date.now() / 1000) + 660 }),
        PERSONAL,
      ],
      ["key not endorsing msteams", await connectorToken({ key: WEBCHAT_ONLY }), PERSONAL],
      [
        "serviceurl claim names another URL",
        await connectorToken({ serviceurl: "https://smba.trafficmanager.net/emea/" }),
        PERSONAL,
      ],
      [
        "activity names another serviceUrl",
        good,
        { ...PERSONAL, serviceUrl: "https://evil.example/amer/" },
      ],
      [
        // What the adapter read before the fix: botframework-connector never does.
        "camelCase serviceUrl claim only",
        await signTestJwt(KEY, {
          issuer: TEAMS_ISSUER,
          audience: APP_ID,
          claims: { serviceUrl: SERVICE_URL },
        }),
        PERSONAL,
      ],
      ["unknown kid", await connectorToken({ kid: "bf-key-9" }), PERSONAL],
      ["another key under the same kid", await connectorToken({ key: IMPOSTOR }), PERSONAL],
      ["tampered signature", `${head}.${body}.${flipped}`, PERSONAL],
      [
        "tampered claims",
        `${head}.${tamper(body, { sub: "someone-else" })}.${signature}`,
        PERSONAL,
      ],
    ];
    for (const [name, token, activity] of cases) {
      assert(!(await connectorAccepts(activity, token)), `botframework-connector took: ${name}`);
      assert(!(await batonAccepts(activity, token)), `baton took: ${name}`);
    }
  },
});

Deno.test({
  name:
    "teamsAdapter.verify() allows clock skew within 5 minutes either way, as botframework-connector's clockTolerance does",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    const now = Math.floor(Date.now() / 1000);
    for (
      const token of [
        await connectorToken({ lifetime: -120 }), // expired two minutes ago
        await connectorToken({ now: now + 180 }), // not valid for another two minutes
      ]
    ) {
      assert(await connectorAccepts(PERSONAL, token), "botframework-connector");
      assert(await batonAccepts(PERSONAL, token), "baton");
    }
  },
});

Deno.test({
  name:
    "teamsAdapter.verify() is stricter than botframework-connector where real traffic never goes: an unendorsed key, RS384, an activity without a URL",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    // botframework-connector checks endorsements only when the key has some. Microsoft's keys
    // document gives every key `endorsements` (Bot Connector authentication docs), so a key
    // without any is not theirs in practice: baton requires the channel's endorsement. Right for
    // baton: the endorsement is what ties a key to Teams.
    const bare = await connectorToken({ key: BARE });
    assert(await connectorAccepts(PERSONAL, bare));
    assert(!(await batonAccepts(PERSONAL, bare)));

    // botframework-connector allows RS256/384/512 (AllowedSigningAlgorithms); the metadata names
    // RS256 as the one the Bot Connector signs with (id_token_signing_alg_values_supported), and
    // baton takes only that. The same published key (no `alg` member, as Microsoft's) signing
    // RS384: the SDK takes it, baton does not.
    assertEquals(AuthenticationConstants.AllowedSigningAlgorithms, ["RS256", "RS384", "RS512"]);
    const rs384Key = await importPKCS8(await exportPKCS8(KEY.privateKey), "RS384");
    const rs384 = await new SignJWT({ serviceurl: SERVICE_URL })
      .setProtectedHeader({ alg: "RS384", typ: "JWT", kid: "bf-key-1" })
      .setIssuer(TEAMS_ISSUER).setAudience(APP_ID).setIssuedAt().setExpirationTime("1h")
      .sign(rs384Key);
    assert(await connectorAccepts(PERSONAL, rs384));
    assert(!(await batonAccepts(PERSONAL, rs384)));

    // botframework-connector skips the serviceurl check when the activity's serviceUrl is no URL
    // (isValidServiceURL: "" fails `new URL("https://")`); baton compares whatever is there and
    // refuses, and parse would answer 400 for such a message anyway: a reply needs a URL the
    // token names.
    const noUrl = { ...PERSONAL, serviceUrl: "" };
    const token = await connectorToken();
    assert(await connectorAccepts(noUrl, token));
    assert(!(await batonAccepts(noUrl, token)));
  },
});

// ── parsing what Teams sends ─────────────────────────────────────────────────────────────────────

function parse(activity: unknown) {
  return teamsAdapter.parse(raw(activity, null), ENV);
}

Deno.test("teamsAdapter.parse() takes schema-typed personal, group chat and channel messages, mentions removed", () => {
  const personal = parse(PERSONAL);
  assert(personal.kind === "message");
  assertStrictEquals(personal.message.text, "hello bot");
  assertEquals(personal.message.sender, {
    platform: "teams",
    user: "aad-ada",
    name: "Ada Lovelace",
    direct: true,
  });
  assertEquals(personal.message.reply, {
    platform: "teams",
    serviceUrl: SERVICE_URL,
    conversation: "a:1personal-chat",
    replyTo: "1700000000001",
  });
  const cases: [Incoming, string][] = [[GROUP_CHAT, "summarise this chat"], [
    CHANNEL,
    "what is new?",
  ]];
  for (const [activity, text] of cases) {
    const ingress = parse(activity);
    assert(ingress.kind === "message", JSON.stringify(ingress));
    assertStrictEquals(ingress.message.text, text);
    assertStrictEquals(ingress.message.sender.direct, false);
    assertStrictEquals(ingress.message.sessionKey, `teams:${activity.conversation.id}`);
  }
  // Without the mention entity, a group or channel post is not for the bot.
  const chatter = parse({ ...CHANNEL, text: "among ourselves", entities: [] });
  assertStrictEquals(chatter.kind, "respond");
});

Deno.test({
  name:
    "teamsAdapter.parse() takes an Action.Submit click as Teams sends it: a message activity with value, replying to the card",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    const [choice] = approvalButtons(7, "call_abc");
    // Teams posts an Action.Submit as a message from the clicker, `value` the action's `data`
    // (merged with any inputs), `replyToId` the card's activity, no text.
    const submit: Incoming = {
      type: "message",
      id: "1700000000123",
      timestamp: new Date("2026-11-23T08:00:05.000Z"),
      serviceUrl: SERVICE_URL,
      channelId: "msteams",
      from: { id: "29:1bob", name: "Bob Kahn", aadObjectId: "aad-bob" },
      conversation: CHANNEL.conversation,
      recipient: BOT,
      replyToId: "1700000000050",
      value: { baton_choice: choice.data },
      channelData: { ...CHANNEL_DATA, source: { name: "message" } },
      locale: "en-US",
    };
    const token = await connectorToken();
    assert(await connectorAccepts(submit, token));
    assert(await batonAccepts(submit, token));
    const ingress = parse(submit);
    assert(ingress.kind === "choice", JSON.stringify(ingress));
    assertStrictEquals(ingress.choice.data, choice.data);
    assertStrictEquals(ingress.choice.context.message_id, "1700000000050");
    assertStrictEquals(ingress.choice.sender.user, "aad-bob");

    // A Universal Action (Action.Execute) would come as an `adaptiveCard/action` invoke; baton
    // sends only Action.Submit, so such an invoke is another card's: acknowledged, no turn.
    const execute: AdaptiveCardInvokeValue = {
      action: { type: "Action.Execute", id: "a1", verb: "approve", data: { baton_choice: "x" } },
      authentication: { id: "", connectionName: "", token: "" },
      state: "",
    };
    const invoke: Incoming = { ...submit, type: "invoke", name: "adaptiveCard/action" };
    assertStrictEquals(parse({ ...invoke, value: execute }).kind, "respond");
    // Another card's submit is acknowledged too.
    assertStrictEquals(parse({ ...submit, value: { answer: "yes" } }).kind, "respond");
  },
});

// ── what baton sends, against the Bot Connector client and botframework-schema ─────────────────

const ACTIVITY_KEYS: KeyTable<Activity> = {
  type: true,
  id: true,
  timestamp: true,
  localTimestamp: true,
  localTimezone: true,
  callerId: true,
  serviceUrl: true,
  channelId: true,
  from: true,
  conversation: true,
  recipient: true,
  textFormat: true,
  attachmentLayout: true,
  membersAdded: true,
  membersRemoved: true,
  reactionsAdded: true,
  reactionsRemoved: true,
  topicName: true,
  historyDisclosed: true,
  locale: true,
  text: true,
  speak: true,
  inputHint: true,
  summary: true,
  suggestedActions: true,
  attachments: true,
  entities: true,
  channelData: true,
  action: true,
  replyToId: true,
  label: true,
  valueType: true,
  value: true,
  name: true,
  relatesTo: true,
  code: true,
  expiration: true,
  importance: true,
  deliveryMode: true,
  listenFor: true,
  textHighlights: true,
  semanticAction: true,
};
const ATTACHMENT_KEYS: KeyTable<Attachment> = {
  contentType: true,
  contentUrl: true,
  content: true,
  name: true,
  thumbnailUrl: true,
};
/** botbuilder's `CardFactory.contentTypes.adaptiveCard`. */
const ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive";

const THREAD = CHANNEL.conversation.id;
const TARGET: TeamsTarget = {
  platform: "teams",
  serviceUrl: `${ORIGIN}/amer/`,
  conversation: THREAD,
  replyTo: "1700000000003",
};
const OUT_ENV = { ...ENV, TEAMS_TOKEN_URL: `${ORIGIN}/token` };

/** Answers baton's token request and its Bot Connector posts, recording them (no network). */
function botConnector(call: FetchCall): Response {
  if (call.url === OUT_ENV.TEAMS_TOKEN_URL) {
    return Response.json({ token_type: "Bearer", expires_in: 3599, access_token: "bf-token" });
  }
  return Response.json({ id: "1:sent" }, { status: 201 });
}

/** What the Bot Connector client itself posts for `sendToConversation(conversation, activity)`. */
async function sdkSends(conversation: string, activity: Record<string, unknown>) {
  received.length = 0;
  const credentials: ConstructorParameters<typeof ConnectorClient>[0] = {
    signRequest: (request) => {
      request.headers.set("authorization", "Bearer bf-token");
      return Promise.resolve(request);
    },
  };
  const client = new ConnectorClient(credentials, { baseUri: TARGET.serviceUrl });
  // The client serializes through its Activity mapper: a member it does not know is dropped, a
  // value of the wrong type throws.
  await client.conversations.sendToConversation(conversation, activity as Partial<Activity>);
  assertStrictEquals(received.length, 1);
  return received[0];
}

/** Every post baton made to the Bot Connector (the token request left out). */
function posts(calls: FetchCall[]): FetchCall[] {
  return calls.filter((c) => c.url !== OUT_ENV.TEAMS_TOKEN_URL);
}

Deno.test({
  name:
    "teamsAdapter.send() posts text replies and typing exactly as botframework-connector's client posts them",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    let sent: FetchCall[] = [];
    await withFetch(botConnector, async (calls) => {
      assertEquals(
        await teamsAdapter.send(TARGET, "part **one**", { index: 0, count: 2 }, OUT_ENV),
        {
          ok: true,
        },
      );
      assertEquals(await teamsAdapter.send(TARGET, "part two", { index: 1, count: 2 }, OUT_ENV), {
        ok: true,
      });
      assert(await teamsAdapter.typing!(TARGET, OUT_ENV));
      sent = posts(calls);
    });
    assertStrictEquals(sent.length, 3);
    for (const call of sent) {
      assertStrictEquals(call.method, "POST");
      assertStrictEquals(call.headers.get("authorization"), "Bearer bf-token");
      assertDeclaredKeys<Activity>("activity", call.body, ACTIVITY_KEYS, ["type"]);
      const sdk = await sdkSends(THREAD, call.body);
      // Same route (sendToConversation: v3/conversations/{id}/activities, the id encoded) and the
      // same body after the SDK's serializer: nothing baton sends is unknown to it or mistyped.
      assertStrictEquals(new URL(call.url).pathname + new URL(call.url).search, sdk.url);
      assertEquals(call.body, sdk.body);
    }
    assertEquals(sent[0].body, {
      type: "message",
      text: "part **one**",
      textFormat: TextFormatTypes.Markdown,
      replyToId: "1700000000003",
    });
    assertEquals(sent[2].body, { type: "typing" });
  },
});

Deno.test({
  name:
    "teamsAdapter.send() shows choices as an Adaptive Card attachment the adaptivecards parser reads without an error",
  ...NODE_HTTP,
  async fn() {
    resetJwtCaches();
    const choices = approvalButtons(7, "call_abc");
    let body: { attachments: Attachment[] } & Record<string, unknown> = { attachments: [] };
    await withFetch(botConnector, async (calls) => {
      await teamsAdapter.send(
        TARGET,
        "Run `session_info`?",
        { index: 0, count: 1, choices },
        OUT_ENV,
      );
      body = posts(calls)[0].body;
    });
    assertDeclaredKeys<Activity>("activity", body, ACTIVITY_KEYS, ["type", "attachments"]);
    assertStrictEquals(body.attachments.length, 1);
    const [attachment] = body.attachments;
    assertDeclaredKeys<Attachment>("attachment", attachment, ATTACHMENT_KEYS, ["contentType"]);
    assertStrictEquals(attachment.contentType, ADAPTIVE_CARD);
    const sdk = await sdkSends(THREAD, body);
    assertEquals(body, sdk.body);

    // The Adaptive Cards library's own parser: every element and action type known, properties
    // valid, the declared version, one Action.Submit per choice carrying its data.
    const card = new AdaptiveCards.AdaptiveCard();
    const errors: unknown[] = [];
    card.parse(attachment.content, errors as never);
    assertEquals(errors, []);
    assertEquals(card.validateProperties().failures, []);
    assertStrictEquals(card.version?.toString(), "1.2");
    assertStrictEquals(card.getItemCount(), 1);
    const text = card.getItemAt(0);
    assert(text instanceof AdaptiveCards.TextBlock);
    assertStrictEquals(text.text, "Run `session_info`?");
    assertStrictEquals(card.getActionCount(), choices.length);
    choices.forEach((choice, i) => {
      const action = card.getActionAt(i);
      assert(action instanceof AdaptiveCards.SubmitAction, `action ${i}`);
      assertStrictEquals(action.title, choice.label);
      assertEquals(action.data, { baton_choice: choice.data });
      // The style Adaptive Cards 1.2 declares (positive/destructive) where the choice has one.
      if (choice.style) assert(["positive", "destructive"].includes(action.style), action.style);
    });
  },
});

Deno.test("teamsAdapter.answerChoice() posts a refused click's notice as a schema Activity", async () => {
  resetJwtCaches();
  const [choice] = approvalButtons(7, "call_abc");
  await withFetch(botConnector, async (calls) => {
    await teamsAdapter.answerChoice!(
      {
        sessionKey: `teams:${THREAD}`,
        deliveryKey: "teams:click:x",
        data: choice.data,
        context: {
          platform: "teams",
          chat_id: THREAD,
          chat_name: "General",
          thread_id: "",
          user_id: "aad-bob",
          user_name: "Bob Kahn",
          session_key: `teams:${THREAD}`,
          message_id: "1700000000050",
        },
        reply: { ...TARGET, replyTo: "1700000000050" },
        sender: { platform: "teams", user: "aad-bob", name: "Bob Kahn", direct: false },
      },
      { kind: "not_yours" },
      OUT_ENV,
    );
    const [post] = posts(calls);
    assertDeclaredKeys<Activity>("activity", post.body, ACTIVITY_KEYS, ["type", "text"]);
    assertEquals(post.body, {
      type: "message",
      text: `Bob Kahn: ${approvalClickText({ kind: "not_yours" })}`,
      replyToId: "1700000000050",
    });
  });
});

/**
 * What MSAL (botframework-connector's MicrosoftAppCredentials → MsalAppCredentials) posts for a
 * token: a ConfidentialClientApplication with the SDK's own authority and scope, its network
 * client recording instead of calling out.
 */
async function msalTokenRequest(tenant?: string): Promise<{ url: URL; form: URLSearchParams }> {
  const sdk = new MicrosoftAppCredentials(APP_ID, PASSWORD, tenant);
  const posted: { url: string; body: string }[] = [];
  const refuse = () => Promise.reject(new Error("no instance discovery expected"));
  const application = new ConfidentialClientApplication({
    auth: { clientId: APP_ID, clientSecret: PASSWORD, authority: sdk.oAuthEndpoint },
    system: {
      networkClient: {
        sendGetRequestAsync: refuse,
        sendPostRequestAsync: <T>(url: string, options?: { body?: string }) => {
          posted.push({ url, body: options?.body ?? "" });
          return Promise.resolve({
            headers: {},
            status: 200,
            body: { token_type: "Bearer", expires_in: 3599, access_token: "msal-token" } as T,
          });
        },
      },
    },
  });
  // `as never`: Deno sees msal-node's ESM declarations, botframework-connector its CJS ones; the
  // same class, which TypeScript tells apart by a private member.
  const credentials = new MsalAppCredentials(
    application as never,
    APP_ID,
    sdk.oAuthEndpoint,
    sdk.oAuthScope,
  );
  assertStrictEquals(await credentials.getToken(true), "msal-token");
  assertStrictEquals(posted.length, 1);
  return { url: new URL(posted[0].url), form: new URLSearchParams(posted[0].body) };
}

Deno.test("teamsAdapter.send() asks for its token as botframework-connector's MSAL credentials do: endpoint, grant, client, scope", async () => {
  for (const tenant of [undefined, "contoso.onmicrosoft.com"]) {
    const msal = await msalTokenRequest(tenant);
    resetJwtCaches();
    let token: FetchCall | undefined;
    const env = {
      TEAMS_APP_ID: APP_ID,
      TEAMS_APP_PASSWORD: PASSWORD,
      ...(tenant ? { TEAMS_TENANT_ID: tenant } : {}),
    };
    await withFetch(
      (call) =>
        call.url.startsWith(AuthenticationConstants.ToChannelFromBotLoginUrlPrefix)
          ? Response.json({ token_type: "Bearer", expires_in: 3599, access_token: "bf-token" })
          : Response.json({ id: "1:sent" }, { status: 201 }),
      async (calls) => {
        await teamsAdapter.send(TARGET, "x", { index: 0, count: 1 }, env);
        token = calls[0];
      },
    );
    assert(token);
    assertStrictEquals(token.method, "POST");
    assertStrictEquals(token.headers.get("content-type"), "application/x-www-form-urlencoded");
    // The same endpoint (MSAL adds only its client-request-id query).
    assertStrictEquals(token.url, msal.url.origin + msal.url.pathname, tenant);
    const form = new URLSearchParams(String(token.init.body));
    // The OAuth members MSAL sends; the rest of its form is its own telemetry (x-client-*).
    for (const name of ["grant_type", "client_id", "client_secret", "scope"]) {
      assertStrictEquals(form.get(name), msal.form.get(name), name);
    }
    assertEquals([...form.keys()].sort(), ["client_id", "client_secret", "grant_type", "scope"]);
    assertStrictEquals(form.get("scope"), "https://api.botframework.com/.default");
  }
});

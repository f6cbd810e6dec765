// Conformance: the Discord adapter against discord-interactions' verifyKey and discord-api-types (interactions in, responses and webhook bodies out); Deno (tests only).
import { assert, assertEquals } from "@std/assert";
import { verifyKey } from "discord-interactions";
import {
  type APIActionRowComponent,
  type APIAllowedMentions,
  type APIApplicationCommandAutocompleteGuildInteraction,
  type APIButtonComponentWithCustomId,
  type APIChatInputApplicationCommandDMInteraction,
  type APIChatInputApplicationCommandGuildInteraction,
  type APIChatInputApplicationCommandInteraction,
  type APIComponentInActionRow,
  type APIInteractionGuildMember,
  type APIInteractionResponse,
  type APIInteractionResponseCallbackData,
  type APIMessage,
  type APIMessageComponentButtonInteraction,
  type APIPingInteraction,
  type APIUser,
  type APIWebhookEvent,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  ApplicationWebhookEventType,
  ApplicationWebhookType,
  ButtonStyle,
  ChannelType,
  ComponentType,
  GuildMemberFlags,
  InteractionContextType,
  InteractionResponseType,
  InteractionType,
  Locale,
  MessageFlags,
  MessageType,
  type RESTPatchAPIWebhookWithTokenMessageJSONBody,
  type RESTPostAPIWebhookWithTokenJSONBody,
} from "discord-api-types/v10";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import {
  type Choice,
  type Ingress,
  type PartSend,
  type RawRequest,
  replyChannel,
} from "../chat/mod.ts";
import { discordAdapter, type DiscordTarget } from "./discord.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { type AnyMemberOf, assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const keys = await discordTestKeys();
const APP_ID = "1100000000000000001";
const ENV = { DISCORD_PUBLIC_KEY: keys.publicKeyHex, DISCORD_APPLICATION_ID: APP_ID };
const NOW = 1_767_000_000;
const TOKEN = "aW50ZXJhY3Rpb24tdG9rZW4tY29uZm9ybWFuY2U";
const GUILD = "1200000000000000002";
const CHANNEL = "1300000000000000003";
const DM_CHANNEL = "1300000000000000004";

// ── signing, both sides ──────────────────────────────────────────────────────────────────────────

interface Delivery {
  body: string;
  signature: string;
  timestamp: string;
}

async function delivery(
  body: string,
  opts: { timestamp?: string; privateKey?: CryptoKey } = {},
): Promise<Delivery> {
  const timestamp = opts.timestamp ?? String(NOW);
  const privateKey = opts.privateKey ?? keys.privateKey;
  return { body, timestamp, signature: await signDiscordRequest({ privateKey, timestamp, body }) };
}

function raw(d: Delivery): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      "x-signature-ed25519": d.signature,
      "x-signature-timestamp": d.timestamp,
    }),
    body: new TextEncoder().encode(d.body),
    url: "https://baton.test/webhooks/discord",
    nowSeconds: NOW,
  };
}

async function batonAccepts(d: Delivery): Promise<boolean> {
  return await discordAdapter.verify(raw(d), ENV) === null;
}

function packageAccepts(d: Delivery): Promise<boolean> {
  return verifyKey(d.body, d.signature, d.timestamp, keys.publicKeyHex);
}

// ── interactions as discord-api-types declares them ──────────────────────────────────────────────

const alice: APIUser = {
  id: "1400000000000000005",
  username: "alice",
  discriminator: "0",
  global_name: "Alice",
  avatar: null,
};

const member: APIInteractionGuildMember = {
  user: alice,
  nick: null,
  roles: [],
  joined_at: "2025-01-01T00:00:00.000000+00:00",
  deaf: false,
  mute: false,
  flags: GuildMemberFlags.CompletedOnboarding,
  permissions: "2248473465835073",
};

/** What every interaction carries, whatever its kind. */
const common: Pick<
  APIChatInputApplicationCommandInteraction,
  | "application_id"
  | "token"
  | "version"
  | "app_permissions"
  | "locale"
  | "entitlements"
  | "attachment_size_limit"
> = {
  application_id: APP_ID,
  token: TOKEN,
  version: 1,
  app_permissions: "2248473465835073",
  locale: Locale.EnglishUS,
  entitlements: [],
  attachment_size_limit: 10_485_760,
};

const guildCommand: APIChatInputApplicationCommandGuildInteraction = {
  ...common,
  id: "1500000000000000006",
  type: InteractionType.ApplicationCommand,
  guild_id: GUILD,
  guild: { id: GUILD, locale: Locale.EnglishUS, features: [] },
  guild_locale: Locale.EnglishUS,
  channel_id: CHANNEL,
  channel: { id: CHANNEL, type: ChannelType.GuildText, name: "general" },
  member,
  context: InteractionContextType.Guild,
  authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: GUILD },
  data: {
    id: "1600000000000000007",
    type: ApplicationCommandType.ChatInput,
    name: "ask",
    options: [{ name: "prompt", type: ApplicationCommandOptionType.String, value: "hello there" }],
  },
};

const dmCommand: APIChatInputApplicationCommandDMInteraction = {
  ...common,
  id: "1500000000000000008",
  type: InteractionType.ApplicationCommand,
  channel_id: DM_CHANNEL,
  channel: { id: DM_CHANNEL, type: ChannelType.DM },
  user: alice,
  context: InteractionContextType.BotDM,
  authorizing_integration_owners: { [ApplicationIntegrationType.UserInstall]: alice.id },
  data: {
    id: "1600000000000000007",
    type: ApplicationCommandType.ChatInput,
    name: "baton",
    options: [{
      name: "ask",
      type: ApplicationCommandOptionType.Subcommand,
      options: [{ name: "prompt", type: ApplicationCommandOptionType.String, value: "in private" }],
    }],
  },
};

const question: APIMessage = {
  id: "1700000000000000009",
  channel_id: CHANNEL,
  author: { id: APP_ID, username: "baton", discriminator: "0", global_name: null, avatar: null },
  content: "Approval needed: shell ls",
  timestamp: "2026-01-01T00:00:00.000000+00:00",
  edited_timestamp: null,
  tts: false,
  mention_everyone: false,
  mentions: [],
  mention_roles: [],
  attachments: [],
  embeds: [],
  pinned: false,
  type: MessageType.Default,
  webhook_id: APP_ID,
  application_id: APP_ID,
};

const click: APIMessageComponentButtonInteraction = {
  ...common,
  id: "1500000000000000010",
  type: InteractionType.MessageComponent,
  guild_id: GUILD,
  channel_id: CHANNEL,
  channel: { id: CHANNEL, type: ChannelType.GuildText, name: "general" },
  member,
  message: question,
  context: InteractionContextType.Guild,
  authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: GUILD },
  data: { custom_id: "bt:a:3:0badcafe:o", component_type: ComponentType.Button },
};

const ping: APIPingInteraction = {
  id: "1500000000000000011",
  application_id: APP_ID,
  type: InteractionType.Ping,
  token: TOKEN,
  version: 1,
  app_permissions: "0",
  entitlements: [],
  authorizing_integration_owners: {},
  attachment_size_limit: 10_485_760,
};

const autocomplete: APIApplicationCommandAutocompleteGuildInteraction = {
  ...common,
  id: "1500000000000000012",
  type: InteractionType.ApplicationCommandAutocomplete,
  guild_id: GUILD,
  channel_id: CHANNEL,
  member,
  authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: GUILD },
  data: {
    id: "1600000000000000007",
    type: ApplicationCommandType.ChatInput,
    name: "ask",
    options: [{
      name: "prompt",
      type: ApplicationCommandOptionType.String,
      value: "hel",
      focused: true,
    }],
  },
};

async function parse(payload: unknown): Promise<Ingress<DiscordTarget>> {
  const d = await delivery(JSON.stringify(payload));
  assertEquals(await discordAdapter.verify(raw(d), ENV), null);
  return discordAdapter.parse(raw(d), ENV);
}

// ── tables tied to the official declarations ─────────────────────────────────────────────────────

const RESPONSE: KeyTable<AnyMemberOf<APIInteractionResponse>> = { type: true, data: true };

const CALLBACK_DATA: KeyTable<APIInteractionResponseCallbackData> = {
  content: true,
  tts: true,
  embeds: true,
  allowed_mentions: true,
  components: true,
  attachments: true,
  flags: true,
  thread_name: true,
  applied_tags: true,
  poll: true,
};

const FOLLOW_UP: KeyTable<RESTPostAPIWebhookWithTokenJSONBody> = {
  content: true,
  username: true,
  avatar_url: true,
  tts: true,
  embeds: true,
  allowed_mentions: true,
  components: true,
  attachments: true,
  flags: true,
  thread_name: true,
  applied_tags: true,
  poll: true,
};

const EDIT: KeyTable<RESTPatchAPIWebhookWithTokenMessageJSONBody> = {
  content: true,
  embeds: true,
  allowed_mentions: true,
  components: true,
  flags: true,
  attachments: true,
  poll: true,
};

const ALLOWED_MENTIONS: KeyTable<APIAllowedMentions> = {
  parse: true,
  roles: true,
  users: true,
  replied_user: true,
};

const ACTION_ROW: KeyTable<APIActionRowComponent<APIComponentInActionRow>> = {
  type: true,
  id: true,
  components: true,
};

const BUTTON: KeyTable<APIButtonComponentWithCustomId> = {
  type: true,
  id: true,
  style: true,
  disabled: true,
  label: true,
  emoji: true,
  custom_id: true,
};

/** Discord's limits: content 2000 characters, five buttons a row, custom_id 1-100, label 80. */
const LIMIT = { content: 2000, rowButtons: 5, customId: 100, label: 80, rows: 5 };

/** The response types an interaction of each kind may be answered with. */
const ALLOWED_RESPONSES: Record<number, readonly InteractionResponseType[]> = {
  [InteractionType.Ping]: [InteractionResponseType.Pong],
  [InteractionType.ApplicationCommand]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.Modal,
  ],
  [InteractionType.MessageComponent]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.DeferredMessageUpdate,
    InteractionResponseType.UpdateMessage,
    InteractionResponseType.Modal,
  ],
  [InteractionType.ApplicationCommandAutocomplete]: [
    InteractionResponseType.ApplicationCommandAutocompleteResult,
  ],
};

function assertContent(content: unknown): void {
  assert(typeof content === "string", "content is a string");
  assert(content.trim().length > 0 && content.length <= LIMIT.content, `${content.length} chars`);
}

function assertComponents(components: unknown): void {
  assert(Array.isArray(components) && components.length <= LIMIT.rows);
  const ids: string[] = [];
  for (const row of components) {
    assertDeclaredKeys<APIActionRowComponent<APIComponentInActionRow>>("row", row, ACTION_ROW, [
      "type",
      "components",
    ]);
    assertEquals(row.type, ComponentType.ActionRow);
    assert(row.components.length >= 1 && row.components.length <= LIMIT.rowButtons);
    for (const button of row.components) {
      assertDeclaredKeys<APIButtonComponentWithCustomId>("button", button, BUTTON, [
        "type",
        "style",
        "custom_id",
      ]);
      assertEquals(button.type, ComponentType.Button);
      assert(
        [ButtonStyle.Primary, ButtonStyle.Secondary, ButtonStyle.Success, ButtonStyle.Danger]
          .includes(button.style),
        `style ${button.style}: a button with custom_id`,
      );
      assert(button.custom_id.length >= 1 && button.custom_id.length <= LIMIT.customId);
      assert(typeof button.label === "string" && button.label.length <= LIMIT.label);
      ids.push(button.custom_id);
    }
  }
  assertEquals(new Set(ids).size, ids.length, "custom_ids are unique in a message");
}

/** The body of a message Discord will show (a response's data, a follow-up, an edit). */
function assertMessageBody(body: Record<string, unknown>): void {
  if ("content" in body) assertContent(body.content);
  if ("allowed_mentions" in body) {
    assertDeclaredKeys<APIAllowedMentions>(
      "allowed_mentions",
      body.allowed_mentions,
      ALLOWED_MENTIONS,
    );
  }
  if ("components" in body) assertComponents(body.components);
  if ("flags" in body) {
    // Only flags an interaction response or webhook may set: EPHEMERAL, SUPPRESS_EMBEDS, …
    assert(typeof body.flags === "number");
    const settable = MessageFlags.Ephemeral | MessageFlags.SuppressEmbeds |
      MessageFlags.SuppressNotifications | MessageFlags.IsComponentsV2;
    assertEquals(body.flags & ~settable, 0, `flags ${body.flags}`);
  }
}

/** Checks an interaction response against APIInteractionResponse and the interaction's kind. */
function assertResponse(interactionType: InteractionType, body: unknown): void {
  assertDeclaredKeys<AnyMemberOf<APIInteractionResponse>>("response", body, RESPONSE, ["type"]);
  const response = body as { type: InteractionResponseType; data?: Record<string, unknown> };
  assert(
    ALLOWED_RESPONSES[interactionType]?.includes(response.type),
    `response type ${response.type} to interaction type ${interactionType}`,
  );
  if (response.type === InteractionResponseType.ChannelMessageWithSource) {
    assertDeclaredKeys<APIInteractionResponseCallbackData>("data", response.data, CALLBACK_DATA);
    assertMessageBody(response.data!);
  }
  if (response.type === InteractionResponseType.DeferredChannelMessageWithSource && response.data) {
    assertDeclaredKeys<APIInteractionResponseCallbackData>("data", response.data, CALLBACK_DATA);
    assertEquals(Object.keys(response.data).filter((k) => k !== "flags"), []);
  }
}

/** Checks a captured webhook call: a follow-up (POST) or an edit of @original (PATCH). */
function assertWebhookCall(call: FetchCall): "follow-up" | "edit" {
  const hook = `https://discord.com/api/v10/webhooks/${APP_ID}/${TOKEN}`;
  assertEquals(call.headers.get("content-type"), "application/json");
  // Discord asks every API client for a User-Agent of the form "DiscordBot ($url, $version)".
  assert(/^DiscordBot \([^,]+, [^)]+\)/.test(call.headers.get("user-agent") ?? ""));
  if (call.method === "POST" && call.url === hook) {
    assertDeclaredKeys<RESTPostAPIWebhookWithTokenJSONBody>("follow-up", call.body, FOLLOW_UP);
    assertContent(call.body.content);
    assertMessageBody(call.body);
    return "follow-up";
  }
  assertEquals([call.method, call.url], ["PATCH", `${hook}/messages/@original`]);
  assertDeclaredKeys<RESTPatchAPIWebhookWithTokenMessageJSONBody>("edit", call.body, EDIT);
  assertMessageBody(call.body);
  return "edit";
}

// ── in: signatures, against discord-interactions ─────────────────────────────────────────────────

Deno.test("discordAdapter.verify() accepts and refuses what discord-interactions' verifyKey does", async () => {
  const body = JSON.stringify(guildCommand);
  const good = await delivery(body);
  const other = await discordTestKeys();
  const flipped = good.signature.slice(0, -1) + (good.signature.endsWith("0") ? "1" : "0");
  const cases: [string, Delivery][] = [
    ["signed", good],
    ["a PING, signed", await delivery(JSON.stringify(ping))],
    ["signed by another application's key", await delivery(body, { privateKey: other.privateKey })],
    ["a body byte changed after signing", { ...good, body: body.replace("hello", "hellO") }],
    ["a byte appended to the body", { ...good, body: body + "\n" }],
    ["the timestamp header changed", { ...good, timestamp: String(NOW - 1) }],
    ["one signature bit flipped", { ...good, signature: flipped }],
    ["the signature cut short", { ...good, signature: good.signature.slice(0, 64) }],
    ["no signature bytes", { ...good, signature: "00".repeat(64) }],
    ["the signature in upper-case hex", { ...good, signature: good.signature.toUpperCase() }],
  ];
  for (const [name, d] of cases) {
    assertEquals(await batonAccepts(d), await packageAccepts(d), name);
  }
  assert(await packageAccepts(good) && !await packageAccepts(cases[2][1]));
});

Deno.test("discordAdapter.verify() also refuses a signed timestamp outside ±5 minutes, which verifyKey lets through", async () => {
  // The timestamp is signed, but verifyKey checks no window: a captured request replays forever.
  const body = JSON.stringify(guildCommand);
  for (const timestamp of [String(NOW - 301), String(NOW + 301), "not-a-time"]) {
    const d = await delivery(body, { timestamp });
    assertEquals([await packageAccepts(d), await batonAccepts(d)], [true, false], timestamp);
  }
  const edge = await delivery(body, { timestamp: String(NOW - 300) });
  assertEquals([await packageAccepts(edge), await batonAccepts(edge)], [true, true]);
});

// ── in: interactions ─────────────────────────────────────────────────────────────────────────────

Deno.test("discordAdapter.parse() answers a PING with the PONG APIInteractionResponse", async () => {
  const ingress = await parse(ping);
  assert(ingress.kind === "respond");
  assertEquals(ingress.status, 200);
  assertResponse(InteractionType.Ping, ingress.body);
  assertEquals(ingress.body, { type: InteractionResponseType.Pong });
});

Deno.test("discordAdapter.parse() takes a guild slash command's author from member.user and defers", async () => {
  const ingress = await parse(guildCommand);
  assert(ingress.kind === "message", JSON.stringify(ingress));
  const { message, ack } = ingress;
  assertEquals(message.text, "hello there");
  assertEquals(message.sessionKey, `discord:${CHANNEL}`);
  assertEquals(message.deliveryKey, `discord:${guildCommand.id}`);
  assertEquals(message.context.user_id, alice.id);
  assertEquals(message.context.chat_name, "general");
  assertEquals(message.sender, {
    platform: "discord",
    user: alice.id,
    name: "Alice",
    direct: false,
  });
  assertEquals(message.reply, { platform: "discord", application_id: APP_ID, token: TOKEN });
  assertResponse(InteractionType.ApplicationCommand, ack!.body);
  assertEquals(ack!.body, { type: InteractionResponseType.DeferredChannelMessageWithSource });
});

Deno.test("discordAdapter.parse() takes a DM slash command's author from user, and a subcommand's option", async () => {
  const ingress = await parse(dmCommand);
  assert(ingress.kind === "message", JSON.stringify(ingress));
  assertEquals(ingress.message.text, "in private");
  assertEquals(ingress.message.sessionKey, `discord:${DM_CHANNEL}`);
  assertEquals(ingress.message.sender, {
    platform: "discord",
    user: alice.id,
    name: "Alice",
    direct: true,
  });
});

Deno.test("discordAdapter.parse() answers a command without text with an ephemeral APIInteractionResponse", async () => {
  const bare: APIChatInputApplicationCommandGuildInteraction = {
    ...guildCommand,
    id: "1500000000000000013",
    data: { id: "1600000000000000007", type: ApplicationCommandType.ChatInput, name: "ask" },
  };
  const ingress = await parse(bare);
  assert(ingress.kind === "respond");
  assertResponse(InteractionType.ApplicationCommand, ingress.body);
  const data = (ingress.body as { data: { flags: number } }).data;
  assertEquals(data.flags & MessageFlags.Ephemeral, MessageFlags.Ephemeral);
});

Deno.test("discordAdapter.parse() turns a button click from member.user into a choice answered as Discord allows", async () => {
  const ingress = await parse(click);
  assert(ingress.kind === "choice", JSON.stringify(ingress));
  assertEquals(ingress.choice.data, "bt:a:3:0badcafe:o");
  assertEquals(ingress.choice.sessionKey, `discord:${CHANNEL}`);
  assertEquals(ingress.choice.context.message_id, question.id);
  assertEquals(ingress.choice.sender, {
    platform: "discord",
    user: alice.id,
    name: "Alice",
    direct: false,
  });
  const answer = await discordAdapter.answerChoice!(ingress.choice, {
    kind: "answered",
    tool: "session_info",
    choice: "once",
  }, ENV);
  assertEquals(answer.status, 200);
  assertResponse(InteractionType.MessageComponent, answer.body);
  // Someone else's button on a message of baton's: acknowledged without a change.
  const foreign = await parse({ ...click, data: { ...click.data, custom_id: "poll:yes" } });
  assert(foreign.kind === "respond");
  assertResponse(InteractionType.MessageComponent, foreign.body);
});

Deno.test("discordAdapter.parse() answers autocomplete with an APIApplicationCommandAutocompleteResponse", async () => {
  const ingress = await parse(autocomplete);
  assert(ingress.kind === "respond");
  assertResponse(InteractionType.ApplicationCommandAutocomplete, ingress.body);
});

Deno.test("discordAdapter.inlineNotice() is an ephemeral CHANNEL_MESSAGE_WITH_SOURCE response", () => {
  const notice = discordAdapter.inlineNotice!("Pairing code: 123456");
  assertResponse(InteractionType.ApplicationCommand, notice.body);
  assertResponse(InteractionType.MessageComponent, notice.body);
});

Deno.test({
  // Finding: discord-interactions' verifyWebhookEventMiddleware and Discord's Webhook Events page
  // answer a webhook event, and the PING that validates the URL, with 204 and no body; baton
  // answered 200 `{}`.
  name: "discordAdapter.parse() acknowledges a Webhook Event (and its PING) with 204 and no body",
  fn: async () => {
    const events: APIWebhookEvent[] = [
      { version: 1, application_id: APP_ID, type: ApplicationWebhookType.Ping, event: undefined },
      {
        version: 1,
        application_id: APP_ID,
        type: ApplicationWebhookType.Event,
        event: {
          type: ApplicationWebhookEventType.ApplicationAuthorized,
          timestamp: "2026-01-01T00:00:00.000000+00:00",
          data: {
            integration_type: ApplicationIntegrationType.UserInstall,
            user: alice,
            scopes: [],
          },
        },
      },
    ];
    for (const event of events) {
      const ingress = await parse(event);
      assert(ingress.kind === "respond");
      assertEquals([ingress.status, ingress.body], [204, null]);
    }
  },
});

// ── out: follow-ups and edits of @original, checked against the REST body types ──────────────────

const target: DiscordTarget = { platform: "discord", application_id: APP_ID, token: TOKEN };

const choices: Choice[] = [
  { label: "Approve once", data: "bt:a:123456789012345:0badcafe:o", style: "primary" },
  { label: "This session", data: "bt:a:123456789012345:0badcafe:s" },
  { label: "Always", data: "bt:a:123456789012345:0badcafe:a" },
  { label: "Deny", data: "bt:a:123456789012345:0badcafe:d", style: "danger" },
];

const OK = () => Response.json({ id: "1800000000000000014", content: "" });

async function captured(fn: () => Promise<void>): Promise<FetchCall[]> {
  let all: FetchCall[] = [];
  await withFetch(OK, async (calls) => {
    await fn();
    all = [...calls];
  });
  return all;
}

Deno.test("discordAdapter.send() edits @original, then posts follow-ups, each body as Discord declares it, within 2000 characters", async () => {
  const paragraph = "Discord keeps messages short, so long replies go in parts. ".repeat(12) +
    "\n\n";
  const parts = replyChannel([discordAdapter], ENV).split(target, paragraph.repeat(10));
  assert(parts.length >= 3, `${parts.length} parts`);
  const calls = await captured(async () => {
    for (const [index, text] of parts.entries()) {
      const sent = await discordAdapter.send(target, text, { index, count: parts.length }, ENV);
      assertEquals(sent, { ok: true });
    }
  });
  assertEquals(calls.map(assertWebhookCall), ["edit", ...parts.slice(1).map(() => "follow-up")]);
  assertEquals(calls.map((c) => c.body.content), parts);
  // Mentions in a model's text ping nobody.
  for (const call of calls) assertEquals(call.body.allowed_mentions, { parse: [] });
});

Deno.test("discordAdapter.send() attaches an action row of buttons as Discord declares, custom_id within 100", async () => {
  const calls = await captured(async () => {
    const question: PartSend = { index: 1, count: 2, choices };
    await discordAdapter.send(target, "Approval needed: shell ls", question, ENV);
    const first: PartSend = { index: 0, count: 1, choices };
    await discordAdapter.send(target, "Approval needed: shell ls", first, ENV);
  });
  assertEquals(calls.map(assertWebhookCall), ["follow-up", "edit"]);
  for (const call of calls) {
    const row = call.body.components[0];
    assertEquals(
      row.components.map((b: APIButtonComponentWithCustomId) => b.custom_id),
      choices.map((c) => c.data),
    );
    assertEquals(
      row.components.map((b: APIButtonComponentWithCustomId) => b.style),
      [ButtonStyle.Primary, ButtonStyle.Secondary, ButtonStyle.Secondary, ButtonStyle.Danger],
    );
  }
});

Deno.test("discordAdapter preview and endPreview edit @original with declared bodies", async () => {
  const calls = await captured(async () => {
    assertEquals(await discordAdapter.preview!(target, "the reply so far", 1, ENV), "shown");
    await discordAdapter.endPreview!(target, "Stopped.", ENV);
    // A blank preview sends nothing: Discord refuses empty content.
    assertEquals(await discordAdapter.preview!(target, "  ", 1, ENV), "shown");
  });
  assertEquals(calls.map(assertWebhookCall), ["edit", "edit"]);
});

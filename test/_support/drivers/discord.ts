// Discord's driver: slash-command interactions (typed by discord-api-types) signed with Ed25519 over timestamp + body, deferred-reply edits read back; Deno (workerd tests, fuzzer, chaos run; Web Crypto).
import { assertEquals } from "@std/assert";
import {
  type APIAttachment,
  type APIChatInputApplicationCommandGuildInteraction,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ChannelType,
  type GuildMemberFlags,
  InteractionType,
  Locale,
} from "discord-api-types/v10";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { seconds } from "./wire.ts";

/** The application every interaction is for (its reply webhooks name it). */
export const DISCORD_APP_ID = "1100000000000000001";
const APP_ID = DISCORD_APP_ID;
const GUILD = "1400000000000000001";
const USER = "1500000000000000001";

function _hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What Discord signs an interaction with: the application's Ed25519 private key. */
export interface DiscordCredentials {
  privateKey: CryptoKey;
}

/** A fresh application key pair: the public half hex-encoded as DISCORD_PUBLIC_KEY takes it. */
export async function discordKeyPair(): Promise<DiscordCredentials & { publicKeyHex: string }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicKeyHex: _hex(raw) };
}

// The application's key pair: Discord signs with the private half, baton holds the public one.
const _pair = await discordKeyPair();
const _stranger = await discordKeyPair();

/**
 * Hex Ed25519 signature of the timestamp header's value followed by the raw body: Discord's
 * scheme (discord-interactions only verifies, so the driver signs as Discord documents it).
 */
async function _sign(
  key: CryptoKey,
  timestamp: string,
  body: string | Uint8Array,
): Promise<string> {
  const encoder = new TextEncoder();
  const bytes = typeof body === "string" ? encoder.encode(timestamp + body) : new Uint8Array([
    ...encoder.encode(timestamp),
    ...body,
  ]);
  return _hex(new Uint8Array(await crypto.subtle.sign("Ed25519", key, bytes)));
}

let _chats = 0;
let _ids = 0;

/** The interaction token names its channel, so a reply (addressed by token) can be told apart. */
export function discordInteractionToken(channel: string, id: string): string {
  return `drv.${channel}.${id}`;
}

const _REPLY = new RegExp(`^/webhooks/${APP_ID}/drv\\.([0-9]+)\\.[0-9]+(/messages/@original)?$`);

/** Discord's driver: a guild text channel per `newChat()`, `/ask prompt:<text>` by Ada. */
export const discordDriver: Driver<DiscordCredentials> = {
  name: "discord",
  path: "/webhooks/discord",
  vars: () => ({ DISCORD_PUBLIC_KEY: _pair.publicKeyHex, DISCORD_APPLICATION_ID: APP_ID }),
  secretVars: ["DISCORD_PUBLIC_KEY"],
  newChat: () => `13000000000${String(++_chats).padStart(8, "0")}`,
  session: (chat) => `discord:${chat}`,
  turnText: (text) => text,
  // `/ask prompt:<text>` in a guild text channel; the sender a member.
  shape({ chat, text, id, from }: Post): APIChatInputApplicationCommandGuildInteraction {
    return {
      id,
      type: InteractionType.ApplicationCommand,
      application_id: APP_ID,
      token: discordInteractionToken(chat, id),
      version: 1,
      channel_id: chat,
      channel: { id: chat, name: "general", type: ChannelType.GuildText },
      guild_id: GUILD,
      guild: { id: GUILD, locale: Locale.EnglishUS, features: [] },
      guild_locale: Locale.EnglishUS,
      locale: Locale.EnglishUS,
      app_permissions: "0",
      entitlements: [],
      authorizing_integration_owners: {},
      attachment_size_limit: 8_388_608,
      member: {
        user: {
          id: from?.id ?? USER,
          username: "ada",
          global_name: from?.name ?? "Ada L.",
          discriminator: "0",
          avatar: null,
        },
        roles: [],
        permissions: "0",
        joined_at: "2024-01-01T00:00:00.000Z",
        deaf: false,
        mute: false,
        flags: 0 as GuildMemberFlags,
      },
      data: {
        id: "1600000000000000001",
        name: "ask",
        type: ApplicationCommandType.ChatInput,
        options: [{ name: "prompt", type: ApplicationCommandOptionType.String, value: text }],
      },
    };
  },
  credentials: { privateKey: _pair.privateKey },
  stranger: { privateKey: _stranger.privateKey },
  async sign(body, { privateKey }, options = {}) {
    const timestamp = String(options.at ?? seconds(undefined));
    return {
      "content-type": "application/json",
      "x-signature-ed25519": await _sign(privateKey, timestamp, body),
      "x-signature-timestamp": timestamp,
    };
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const interactionId = id ?? `12000000000${String(++_ids).padStart(8, "0")}`;
    const body = JSON.stringify(discordDriver.shape({ chat, text, id: interactionId }));
    return {
      headers: await discordDriver.sign(body, discordDriver.credentials),
      body,
      id: interactionId,
    };
  },
  async tamper(delivery) {
    const timestamp = delivery.headers["x-signature-timestamp"];
    const good = delivery.headers["x-signature-ed25519"];
    const forged = (signature: string) => ({
      ...delivery,
      headers: { ...delivery.headers, "x-signature-ed25519": signature },
    });
    return [
      forged(await _sign(_pair.privateKey, timestamp, delivery.body + " ")),
      forged("00".repeat(64)),
      forged("not-hex"),
      forged(good.slice(0, 126)),
      { ...delivery, headers: { "content-type": "application/json" } },
    ];
  },
  // Discord does not resend an interaction; a replay is the same request, signed anew.
  redeliver: async (delivery) => ({
    ...delivery,
    headers: await discordDriver.sign(delivery.body, discordDriver.credentials),
  }),
  // A deferred channel message: the reply edits it later.
  ack: { json: { type: 5 } },
  sent(call) {
    const match = _REPLY.exec(call.path);
    if (!match) return undefined;
    return { chat: match[1], text: call.body.content };
  },
  partLimit: 2000,
  rateLimited: () => ({
    status: 429,
    body: { message: "You are being rate limited.", retry_after: 1, global: false },
    headers: { "x-ratelimit-scope": "user" },
  }),
  context: ({ chat }, delivery) => ({
    platform: "discord",
    chat_id: chat,
    thread_id: "",
    user_id: USER,
    user_name: "Ada L.",
    session_key: `discord:${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call, delivery) {
    const { token } = JSON.parse(delivery.body);
    assertEquals(
      [call.method, call.path],
      ["PATCH", `/webhooks/${APP_ID}/${token}/messages/@original`],
    );
    // `components: []`: an edit of @original takes away buttons a question may have left there.
    const { content: _, ...rest } = call.body;
    assertEquals(rest, { allowed_mentions: { parse: [] }, components: [] });
  },
  expectParts(calls, delivery) {
    // The first part edits the deferred reply; the others are follow-up messages.
    const { token } = JSON.parse(delivery.body);
    assertEquals(calls.map((c) => [c.method, c.path]), [
      ["PATCH", `/webhooks/${APP_ID}/${token}/messages/@original`],
      ...calls.slice(1).map(() => ["POST", `/webhooks/${APP_ID}/${token}`]),
    ]);
  },
};

/**
 * `/ask` with attachment options (`file`, `file2`, …: option type ATTACHMENT, each naming an
 * attachment of `data.resolved.attachments`, as Discord sends an upload to a slash command), and
 * the `prompt` option only when `post.text` is not empty.
 */
export function discordAttachmentCommand(
  post: Post,
  attachments: APIAttachment[],
): APIChatInputApplicationCommandGuildInteraction {
  const shaped = discordDriver.shape(post) as APIChatInputApplicationCommandGuildInteraction;
  return {
    ...shaped,
    data: {
      ...shaped.data,
      options: [
        ...(post.text
          ? [{
            name: "prompt",
            type: ApplicationCommandOptionType.String as const,
            value: post.text,
          }]
          : []),
        ...attachments.map((a, i) => ({
          name: i === 0 ? "file" : `file${i + 1}`,
          type: ApplicationCommandOptionType.Attachment as const,
          value: a.id,
        })),
      ],
      resolved: { attachments: Object.fromEntries(attachments.map((a) => [a.id, a])) },
    },
  };
}

/** An attachment as Discord resolves one: `url` on its CDN (no auth), name, type and size. */
export function discordAttachment(
  id: string,
  file: { url: string; filename: string; content_type: string; size: number },
): APIAttachment {
  return { id, ...file, proxy_url: file.url, ephemeral: true };
}

// Discord HTTP interactions adapter: Ed25519 verify, slash-command parse (text and attachments), deferred-reply send; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  approvalClickText,
  type Ingress,
  isChoiceData,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformEnv,
  type RawRequest,
} from "../chat/mod.ts";
import { respond, TIMESTAMP_TOLERANCE_SECONDS, timestampProblem } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { discordMedia, fetchDiscordMedia } from "./discord_media.ts";
import { DISCORD_FILE_MAX_BYTES } from "./discord_files.ts";
import { discordEditOriginal, discordSend } from "./discord_send.ts";
import { fileAsText } from "./_file_out.ts";
import { decodeHex, log, withPrefix } from "../runtime/mod.ts";

/** Interaction types (PING 1, APPLICATION_COMMAND 2, MESSAGE_COMPONENT 3, AUTOCOMPLETE 4, MODAL_SUBMIT 5). */
const _PING = 1;
const _COMMAND = 2;
const _COMPONENT = 3;
const _AUTOCOMPLETE = 4;
const _MODAL_SUBMIT = 5;
/** Application command option type STRING. */
const _STRING_OPTION = 3;
/** Message flag EPHEMERAL. */
const _EPHEMERAL = 64;

/** Told to the user, at once, when a command carries no text and no attachment to answer. */
export const DISCORD_NO_TEXT_NOTICE = "This command needs a text option.";

type _Option = { type: number; value?: unknown; options?: _Option[] };

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _option: z.ZodType<_Option> = z.lazy(() =>
  z.looseObject({
    type: z.number(),
    value: z.unknown().optional(),
    get options() {
      return z.array(_option).optional();
    },
  })
);

const _user = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    username: z.string(),
    global_name: z.string().nullish(),
  })
);

const _interaction = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    type: z.number(),
    application_id: z.string().min(1),
  })
);

const _command = z.lazy(() =>
  z.looseObject({
    token: z.string().min(1),
    channel_id: z.string().min(1).optional(),
    channel: z.looseObject({
      id: z.string().min(1),
      name: z.string().nullish(),
      type: z.number().optional(),
    }).optional(),
    guild_id: z.string().optional(),
    /** Where the command ran: 0 a server, 1 the bot's DM, 2 a private channel (user-installed apps). */
    context: z.number().optional(),
    member: z.looseObject({ user: _user }).optional(),
    user: _user.optional(),
    data: z.looseObject({ options: z.array(_option).optional() }).optional(),
  })
);

/** Where a Discord reply goes: the interaction, by its token (valid 15 minutes). */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("discord"),
    application_id: z.string().min(1).optional(),
    token: z.string().min(1),
  })
);

/** A Discord reply target, as stored with the message. */
export type DiscordTarget = z.infer<typeof _target>;

let _keyCache: { hex: string; key: Promise<CryptoKey | null> } | undefined;

function _publicKey(hex: string): Promise<CryptoKey | null> {
  if (_keyCache?.hex !== hex) {
    const raw = decodeHex(hex, 32);
    const key = raw
      ? crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"])
        .catch(() => null)
      : Promise.resolve(null);
    _keyCache = { hex, key };
  }
  return _keyCache.key;
}

async function _verify(request: RawRequest, env: PlatformEnv): Promise<string | null> {
  const signatureHex = request.headers.get("x-signature-ed25519");
  const timestamp = request.headers.get("x-signature-timestamp");
  if (!signatureHex || !timestamp) {
    return "missing X-Signature-Ed25519 or X-Signature-Timestamp header";
  }
  const signature = decodeHex(signatureHex, 64);
  if (!signature) return "X-Signature-Ed25519 is not a 64-byte hex signature";
  const problem = timestampProblem(timestamp, request.nowSeconds);
  if (problem === "malformed") return "X-Signature-Timestamp is not a number of seconds";
  if (problem === "outside") {
    return `X-Signature-Timestamp is outside ±${TIMESTAMP_TOLERANCE_SECONDS}s of now`;
  }
  const key = await _publicKey(env.DISCORD_PUBLIC_KEY ?? "");
  if (!key) return "DISCORD_PUBLIC_KEY is not a 32-byte hex Ed25519 public key";
  const data = withPrefix(timestamp, request.body);
  try {
    if (await crypto.subtle.verify("Ed25519", key, signature, data)) return null;
  } catch {
    // A signature the runtime cannot check is refused like a wrong one.
  }
  return "X-Signature-Ed25519 does not match";
}

function _firstText(options: readonly _Option[] | undefined): string | null {
  for (const option of options ?? []) {
    if (
      option.type === _STRING_OPTION && typeof option.value === "string" && option.value.trim()
    ) {
      return option.value;
    }
    const nested = _firstText(option.options);
    if (nested !== null) return nested;
  }
  return null;
}

// An interaction answer with a message only the sender sees.
function _ephemeral(content: string) {
  return { type: 4, data: { content, flags: _EPHEMERAL } };
}

function _notice(content: string): Ingress<DiscordTarget> {
  return respond(_ephemeral(content));
}

function _isWebhookEvent(payload: unknown): boolean {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return false;
  const fields = payload as Record<string, unknown>;
  return typeof fields.version === "number" && !("id" in fields);
}

function _parse(request: RawRequest, env: PlatformEnv): Ingress<DiscordTarget> {
  const payload = parseJsonBody(request.body);
  const base = _interaction.safeParse(payload);
  if (!base.success) {
    // App-level Webhook Events (a version, no id) — the URL's validation PING among them — are
    // acknowledged as Discord asks: 204 with no body (its Webhook Events docs and
    // discord-interactions' verifyWebhookEventMiddleware). Anything else not an interaction: {}.
    return _isWebhookEvent(payload) ? respond(null, 204) : respond({});
  }
  const interaction = base.data;
  switch (interaction.type) {
    case _PING:
      return respond({ type: 1 });
    case _COMMAND:
      break;
    case _AUTOCOMPLETE:
      return respond({ type: 8, data: { choices: [] } });
    case _COMPONENT:
      return _parseComponent(payload, interaction.application_id, env);
    case _MODAL_SUBMIT:
      return respond({ type: 6 });
    default:
      return respond({});
  }
  const command = _command.safeParse(payload);
  if (!command.success) return respond({});
  const { token, channel_id, channel, guild_id, context, member, user, data } = command.data;
  const chatId = channel_id ?? channel?.id;
  const author = member?.user ?? user;
  if (!chatId || !author) return respond({});
  if (interaction.application_id !== env.DISCORD_APPLICATION_ID) {
    log.warn("discord: interaction for another application; check DISCORD_APPLICATION_ID");
    return _notice("This bot is misconfigured: DISCORD_APPLICATION_ID does not match.");
  }
  const text = _firstText(data?.options);
  // Attachment options are announced, never fetched here: the turn fetches them (`fetchMedia`).
  const media = discordMedia(data);
  if (text === null && !media.length) return _notice(DISCORD_NO_TEXT_NOTICE);
  return {
    kind: "message",
    message: platformEvent("discord", {
      sessionKey: `discord:${chatId}`,
      deliveryKey: `discord:${interaction.id}`,
      text: text ?? "",
      ...(media.length ? { media } : {}),
      context: {
        chat_id: chatId,
        chat_name: channel?.name ?? "",
        thread_id: "",
        user_id: author.id,
        user_name: author.global_name || author.username,
        message_id: interaction.id,
      },
      reply: {
        platform: "discord",
        application_id: interaction.application_id,
        token,
      },
      sender: {
        user: author.id,
        name: author.global_name || author.username,
        // The bot's DM only: not a server, not a group DM (channel type 3) another app runs in.
        direct: guild_id === undefined && member === undefined &&
          (context === undefined ? channel?.type !== 3 : context === 1),
      },
    }),
    ack: { status: 200, body: { type: 5 } },
  };
}

const _component = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1),
    token: z.string().min(1),
    channel_id: z.string().min(1).optional(),
    channel: z.looseObject({ id: z.string().min(1), name: z.string().nullish() }).optional(),
    guild_id: z.string().optional(),
    member: z.looseObject({ user: _user }).optional(),
    user: _user.optional(),
    message: z.looseObject({ id: z.string().min(1) }).optional(),
    data: z.looseObject({ custom_id: z.string() }),
  })
);

/**
 * A click on baton's buttons (a component interaction): its session is the channel, keyed as the
 * command that started the turn. Any other component is acknowledged without a change (type 6).
 */
function _parseComponent(
  payload: unknown,
  applicationId: string,
  env: PlatformEnv,
): Ingress<DiscordTarget> {
  const parsed = _component.safeParse(payload);
  if (!parsed.success || !isChoiceData(parsed.data.data.custom_id)) return respond({ type: 6 });
  const { id, token, channel_id, channel, guild_id, member, user, message, data } = parsed.data;
  const chatId = channel_id ?? channel?.id;
  const clicker = member?.user ?? user;
  if (!chatId || !clicker || applicationId !== env.DISCORD_APPLICATION_ID) {
    return respond({ type: 6 });
  }
  const name = clicker.global_name || clicker.username;
  return {
    kind: "choice",
    choice: platformEvent("discord", {
      sessionKey: `discord:${chatId}`,
      deliveryKey: `discord:${id}`,
      data: data.custom_id,
      context: {
        chat_id: chatId,
        chat_name: channel?.name ?? "",
        thread_id: "",
        user_id: clicker.id,
        user_name: name,
        message_id: message?.id ?? id,
      },
      // The click's own interaction; a refusal is answered inline (`inlineNotice`) all the same.
      reply: { platform: "discord", application_id: applicationId, token },
      sender: {
        user: clicker.id,
        name,
        direct: guild_id === undefined && member === undefined,
      },
    }),
  };
}

/**
 * Discord HTTP interactions in (slash commands start turns, their attachment options fetched
 * inside the turn: discord_media.ts; clicks on baton's buttons answer questions), deferred interaction replies out (a question with its buttons).
 */
export const discordAdapter: PlatformAdapter<DiscordTarget> = {
  name: "discord",
  requiredEnv: ["DISCORD_PUBLIC_KEY", "DISCORD_APPLICATION_ID"],
  maxMessageChars: 2000,
  asyncDelivery: false,
  replyTarget: _target,
  verify: _verify,
  parse: _parse,
  // Every interaction needs an answer; an ephemeral one is seen by the sender only.
  inlineNotice: (content) => ({ status: 200, body: _ephemeral(content) }),
  // Editing @original again shows one message, whatever the first edit did; follow-ups cannot be
  // read back, so a follow-up in doubt is resent behind the note (REPLY_IN_DOUBT).
  idempotentPart: (index) => index === 0,
  send: discordSend,
  // A file is the part's attachment: on `@original` for part 0 (an edit, so a repeat shows it
  // once), a follow-up after; past the upload limit, its signed link in text.
  sendFile: (target, file, caption, part, env) =>
    file.size > DISCORD_FILE_MAX_BYTES
      ? discordSend(target, fileAsText(file, caption), part, env)
      : discordSend(target, caption, part, env, file),
  fetchMedia: fetchDiscordMedia,
  // The deferred response shows "thinking…" by itself; the reply grows in @original, whose final
  // edit (part 0 of the reply) replaces the preview like any repeat of that edit.
  preview: async (target, text, _draft, env) => {
    if (!text.trim()) return "shown";
    const result = await discordEditOriginal(target, text, env);
    return result.ok ? "shown" : result.status === 429 ? "rate_limited" : "failed";
  },
  // A paused turn's preview stays: its question is a follow-up, and the reply edits `@original`.
  endPreview: async (target, text, env) => {
    if (text !== null) await discordEditOriginal(target, text, env);
  },
  // The clicker alone sees the answer (an ephemeral message), the question stays as it is.
  answerChoice: (_choice, answer) =>
    Promise.resolve({ status: 200, body: _ephemeral(approvalClickText(answer)) }),
};

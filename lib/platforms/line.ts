// LINE Messaging API adapter: x-line-signature webhooks in (text message events), push messages out with a retry key; runtime-neutral (fetch, Web Crypto).
import { z } from "zod";
import {
  type Ingress,
  parseJsonBody,
  type PartSend,
  type PlatformAdapter,
  type PlatformEnv,
  type PlatformMessage,
  type SendResult,
} from "../platform.ts";
import {
  apiRoot,
  decodeBase64,
  detail,
  encodeBase64,
  encodeHex,
  hmacSign,
  hmacVerify,
  ignore,
  jsonField,
  retryAfterHeader,
  sendRequest,
} from "./_kit.ts";

const _HEADER = "x-line-signature";
const _DEFAULT_API_ROOT = "https://api.line.me";
/** LINE states no wait for a 429: a second, then the outbox backs off further. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;
/** A 429 for the month's message quota: waiting minutes does not help. */
const _MONTHLY_LIMIT = /monthly limit/i;
const _ID = /^[A-Za-z0-9_-]{1,64}$/;

const _source = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("user"), userId: z.string().regex(_ID) }),
  z.looseObject({
    type: z.literal("group"),
    groupId: z.string().regex(_ID),
    userId: z.string().regex(_ID).optional(),
  }),
  z.looseObject({
    type: z.literal("room"),
    roomId: z.string().regex(_ID),
    userId: z.string().regex(_ID).optional(),
  }),
]);

const _mentionee = z.looseObject({
  index: z.number().int().nonnegative(),
  length: z.number().int().positive(),
  isSelf: z.boolean().optional(),
});

const _messageEvent = z.looseObject({
  type: z.literal("message"),
  mode: z.string().optional(),
  webhookEventId: z.string().min(1).max(64),
  deliveryContext: z.looseObject({ isRedelivery: z.boolean() }).optional(),
  source: _source,
  message: z.looseObject({
    type: z.string(),
    id: z.string().min(1).max(64),
    text: z.string().optional(),
    mention: z.looseObject({ mentionees: z.array(_mentionee) }).optional(),
  }),
});

const _payload = z.looseObject({ events: z.array(z.unknown()) });

/** Where a LINE reply goes: the push API's `to` (a user, group or room id). */
const _target = z.object({ platform: z.literal("line"), to: z.string().regex(_ID) });

/** A LINE reply target, as stored with the message. */
export type LineTarget = z.infer<typeof _target>;

/** Every text message event of a delivery, in order (LINE batches events). */
function _parse(body: Uint8Array): Ingress<LineTarget> {
  const payload = _payload.safeParse(parseJsonBody(body));
  // The console's "Verify" sends `events: []`: acknowledged like any delivery without a message.
  if (!payload.success) return ignore();
  const messages = payload.data.events.map(_message).filter((m) => m !== null);
  if (messages.length === 0) return ignore();
  if (messages.length === 1) return { kind: "message", message: messages[0] };
  return { kind: "messages", messages };
}

function _message(raw: unknown): PlatformMessage<LineTarget> | null {
  const parsed = _messageEvent.safeParse(raw);
  // Follows, joins, postbacks, stickers, images: acknowledged, no turn.
  if (!parsed.success || parsed.data.message.type !== "text") return null;
  const event = parsed.data;
  // In standby another channel answers (module mode): not this bot's turn.
  if (event.mode !== undefined && event.mode !== "active") return null;
  const { source, message } = event;
  const user = source.userId;
  if (!user) return null; // no one to hold to account for the turn
  const direct = source.type === "user";
  let text = message.text ?? "";
  if (!direct) {
    // A group hears everything: only a mention of the bot, or a command, is for it.
    const self = message.mention?.mentionees.filter((m) => m.isSelf) ?? [];
    if (self.length === 0 && !text.trimStart().startsWith("/")) return null;
    text = _withoutMentions(text, self);
  }
  text = text.trim();
  if (!text) return null;
  const chat = source.type === "user"
    ? source.userId
    : source.type === "group"
    ? source.groupId
    : source.roomId;
  return {
    sessionKey: `line:${source.type}:${chat}`,
    // Redeliveries (`deliveryContext.isRedelivery`) keep the event's id: one turn either way.
    deliveryKey: `line:${event.webhookEventId}`,
    text,
    context: {
      chat_id: chat,
      chat_name: "",
      thread_id: "",
      user_id: user,
      user_name: user,
      message_id: message.id,
    },
    reply: { platform: "line", to: chat },
    sender: { user, name: user, direct },
  };
}

/** `text` without the spans (UTF-16 index and length, as LINE counts) of the bot's own mentions. */
function _withoutMentions(text: string, spans: readonly z.infer<typeof _mentionee>[]): string {
  let out = text;
  for (const span of [...spans].sort((a, b) => b.index - a.index)) {
    if (span.index + span.length > out.length) continue;
    out = out.slice(0, span.index) + out.slice(span.index + span.length);
  }
  return out;
}

/**
 * The `X-Line-Retry-Key` of a part: a UUID drawn from the chat and the part's marker, so a resend
 * of the same part carries the same key and LINE answers 409 instead of showing it twice. Without
 * a marker (a notice sent outside the outbox), a fresh one.
 */
export async function lineRetryKey(to: string, marker: string | undefined): Promise<string> {
  if (!marker) return crypto.randomUUID();
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${to}|${marker}`)),
  ).slice(0, 16);
  digest[6] = (digest[6] & 0x0f) | 0x40; // version 4 layout, as LINE requires a UUID
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = encodeHex(digest);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

async function _push(
  target: LineTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const token = env.LINE_CHANNEL_ACCESS_TOKEN ?? "";
  const root = apiRoot(env, "LINE_API_ROOT", _DEFAULT_API_ROOT);
  const retryKey = await lineRetryKey(target.to, part.marker);
  const result = await sendRequest(`${root}/v2/bot/message/push`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "x-line-retry-key": retryKey,
    },
    body: JSON.stringify({ to: target.to, messages: [{ type: "text", text }] }),
  }, {
    api: "LINE Messaging API",
    leaving: part.leaving,
    secrets: [token],
    // The retry key makes a repeat harmless: a lost answer or a 5xx may be sent again.
    idempotent: true,
    rateLimited: ({ status, body }) =>
      status === 429 && !_MONTHLY_LIMIT.test(String(jsonField(body, "message") ?? "")),
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }) =>
      `the LINE Messaging API answered ${status}${detail(jsonField(body, "message"))}`,
  });
  // 409 to a retry key: an earlier send of this very part was accepted.
  if (!result.ok && result.status === 409) return { ok: true };
  return result;
}

/**
 * LINE Messaging API webhooks in (signed; text `message` events from a user, or mentioning the bot
 * in a group or room; redeliveries run once), push messages out (the reply token expires before a
 * turn may end), each part under a retry key so a resend can never show twice.
 */
export const lineAdapter: PlatformAdapter<LineTarget> = {
  name: "line",
  requiredEnv: ["LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN"],
  // UTF-16 code units, as JavaScript strings count.
  maxMessageChars: 5000,
  asyncDelivery: false,
  replyTarget: _target,
  async verify(request, env) {
    const secret = env.LINE_CHANNEL_SECRET;
    if (!secret) return "LINE_CHANNEL_SECRET is not set";
    const given = request.headers.get(_HEADER) ?? "";
    if (!given) return `missing ${_HEADER} header`;
    const signature = decodeBase64(given.trim(), 32);
    if (!signature) return `malformed ${_HEADER} (expected base64 of 32 bytes)`;
    const ok = await hmacVerify(secret, signature, request.body);
    return ok ? null : `${_HEADER} does not match the body`;
  },
  parse: (request) => _parse(request.body),
  send: _push,
  // Every part carries a retry key drawn from its marker: sending it again cannot show twice.
  idempotentPart: () => true,
};

/** Signs a body as LINE does: base64 HMAC-SHA256 under the channel secret. For tests and tooling. */
export async function signLinePayload(
  channelSecret: string,
  body: string | Uint8Array,
): Promise<string> {
  return encodeBase64(await hmacSign(channelSecret, body));
}

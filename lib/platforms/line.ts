// LINE Messaging API adapter: x-line-signature webhooks in (text message events, postbacks of baton's quick replies), push messages out with a retry key, the loading animation; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  approvalClickText,
  type ClickAnswer,
  type Ingress,
  isChoiceData,
  type OutgoingFile,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type PlatformMessage,
} from "../chat/mod.ts";
import { batchIngress, clickNoticeDue, ignore } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { fileAsText } from "./_file_out.ts";
import { lineCall } from "./line_call.ts";
import { lineImageMessage } from "./line_files.ts";
import { fetchLineMedia, lineMedia } from "./line_media.ts";
import { linePush } from "./line_push.ts";
import { decodeBase64, encodeBase64, hmacSign, hmacVerify, log } from "../runtime/mod.ts";
import { olderThanHorizon, REPLAY_HORIZON_MS } from "./_replay_horizon.ts";

const _HEADER = "x-line-signature";
const _ID = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * How long one loading animation lasts (5–60 s, in fives). The live reply renews it every 4 s and
 * each call sets the time left anew, so it outlasts a turn that ends without a message by 10 s at
 * most; a reply ends it at once.
 */
const _LOADING_SECONDS = 10;
/**
 * How old an event (its signed `timestamp`) may be and still start anything; older is refused as
 * a replay, acknowledged and logged. LINE signs no delivery time and does not say how long it
 * redelivers: "The number and interval of the webhook redelivery are not disclosed" (Messaging API
 * news, 2022-04-19, https://developers.line.biz/en/news/2022/04/19/webhook-redelivery/). So the
 * horizon is the one baton's dedup can keep: within it a repeat of a seen event is remembered.
 * Hence no `keyMemoryMs`: the inbox's day covers it, and a longer horizon would keep a redelivery
 * whose reply token expired long ago, for retries LINE never promised.
 */
const _EVENT_HORIZON_MS = REPLAY_HORIZON_MS;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _source = z.lazy(() =>
  z.discriminatedUnion("type", [
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
  ])
);

const _mentionee = z.lazy(() =>
  z.looseObject({
    index: z.number().int().nonnegative(),
    length: z.number().int().positive(),
    isSelf: z.boolean().optional(),
  })
);

const _messageEvent = z.lazy(() =>
  z.looseObject({
    type: z.literal("message"),
    mode: z.string().optional(),
    timestamp: z.number().optional(),
    webhookEventId: z.string().min(1).max(64),
    deliveryContext: z.looseObject({ isRedelivery: z.boolean() }).optional(),
    source: _source,
    message: z.looseObject({
      type: z.string(),
      id: z.string().min(1).max(64),
      text: z.string().optional(),
      mention: z.looseObject({ mentionees: z.array(_mentionee) }).optional(),
    }),
  })
);

/** A tap on a postback action (baton's quick replies carry their choice as `data`). */
const _postbackEvent = z.lazy(() =>
  z.looseObject({
    type: z.literal("postback"),
    mode: z.string().optional(),
    timestamp: z.number().optional(),
    webhookEventId: z.string().min(1).max(64),
    deliveryContext: z.looseObject({ isRedelivery: z.boolean() }).optional(),
    source: _source,
    replyToken: z.string().min(1).max(256).optional(),
    postback: z.looseObject({ data: z.string() }),
  })
);

const _payload = z.lazy(() => z.looseObject({ events: z.array(z.unknown()) }));

/** Where a LINE reply goes: the push API's `to` (a user, group or room id). */
const _target = z.lazy(() => z.object({ platform: z.literal("line"), to: z.string().regex(_ID) }));

/** A LINE reply target, as stored with the message. */
export type LineTarget = z.infer<typeof _target>;

/**
 * Every text message event and click of a delivery, in order (LINE batches events); an event older
 * than the horizon at `nowSeconds` is dropped (logged), the delivery's others kept.
 */
function _parse(body: Uint8Array, nowSeconds: number): Ingress<LineTarget> {
  const payload = _payload.safeParse(parseJsonBody(body));
  // The console's "Verify" sends `events: []`: acknowledged like any delivery without a message.
  if (!payload.success) return ignore();
  const { events } = payload.data;
  const messages = events.map((e) => _message(e, nowSeconds)).filter((m) => m !== null);
  const choices = events.map((e) => _choice(e, nowSeconds)).filter((c) => c !== null);
  return batchIngress(messages, choices);
}

/**
 * Who an event is from and where its answer goes: the same for a message and a click, so a click
 * passes the access gate as its clicker's messages do. Null in standby (module mode: another
 * channel answers), without a user to hold to account, or older than the replay horizon.
 */
function _author(
  event: {
    mode?: string;
    timestamp?: number;
    webhookEventId: string;
    source: z.infer<typeof _source>;
  },
  messageId: string,
  nowSeconds: number,
): Omit<PlatformMessage<LineTarget>, "text"> | null {
  if (event.mode !== undefined && event.mode !== "active") return null;
  const stamp = { id: event.webhookEventId, eventMs: event.timestamp };
  if (olderThanHorizon("line", stamp, nowSeconds, _EVENT_HORIZON_MS)) return null;
  const { source } = event;
  const user = source.userId;
  if (!user) return null;
  const chat = source.type === "user"
    ? source.userId
    : source.type === "group"
    ? source.groupId
    : source.roomId;
  return platformEvent("line", {
    sessionKey: `line:${source.type}:${chat}`,
    // Redeliveries (`deliveryContext.isRedelivery`) keep the event's id: one turn either way, while
    // the inbox remembers it (the horizon above refuses the event once it may not).
    deliveryKey: `line:${event.webhookEventId}`,
    context: {
      chat_id: chat,
      chat_name: "",
      thread_id: "",
      user_id: user,
      user_name: user,
      message_id: messageId,
    },
    reply: { platform: "line", to: chat },
    sender: { user, name: user, direct: source.type === "user" },
  });
}

/**
 * A tap on one of baton's quick replies. The reply token (first deliveries only) answers it: a
 * redelivery's original was answered already, or its answer would come late.
 */
function _choice(raw: unknown, nowSeconds: number): PlatformChoice<LineTarget> | null {
  const parsed = _postbackEvent.safeParse(raw);
  // Rich menus' and other postbacks: acknowledged, nothing to answer.
  if (!parsed.success || !isChoiceData(parsed.data.postback.data)) return null;
  const event = parsed.data;
  const author = _author(event, event.webhookEventId, nowSeconds);
  if (!author) return null;
  const first = event.deliveryContext?.isRedelivery !== true;
  return {
    ...author,
    data: parsed.data.postback.data,
    ...(first && event.replyToken ? { handle: event.replyToken } : {}),
  };
}

function _message(raw: unknown, nowSeconds: number): PlatformMessage<LineTarget> | null {
  const parsed = _messageEvent.safeParse(raw);
  if (!parsed.success) return null;
  const event = parsed.data;
  const { source, message } = event;
  // Images, videos, audio and files: announced, fetched inside the turn (line_media.ts).
  const media = message.type === "text" ? null : lineMedia(message);
  // Follows, joins, stickers, locations: acknowledged, no turn.
  if (message.type !== "text" && !media) return null;
  const author = _author(event, message.id, nowSeconds);
  if (!author) return null;
  // A group's media cannot mention the bot: only a 1:1 chat's are for it.
  if (media) return source.type === "user" ? { ...author, text: "", ...media } : null;
  let text = message.text ?? "";
  if (source.type !== "user") {
    // A group hears everything: only a mention of the bot, or a command, is for it.
    const self = message.mention?.mentionees.filter((m) => m.isSelf) ?? [];
    if (self.length === 0 && !text.trimStart().startsWith("/")) return null;
    text = _withoutMentions(text, self);
  }
  text = text.trim();
  return text ? { ...author, text } : null;
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
 * Answers a click. LINE has no answer for the clicker alone (no toast, no ephemeral): the tap shows
 * in the chat as its `displayText`, and an approval shows by the turn going on. So only what a
 * click that did nothing must say ("Not yours" to someone else in a group, "Already answered") is
 * sent, with the postback's reply token (free, unlike a push) into the chat it came from, as
 * Telegram's toast or Slack's ephemeral would say it; a redelivery carries no token and is not
 * answered twice. The webhook is answered 200 either way, promptly, as LINE wants. A failure is
 * logged only: the click has been judged already.
 */
async function _answerChoice(
  choice: PlatformChoice<LineTarget>,
  answer: ClickAnswer,
  env: PlatformEnv,
): Promise<{ status: number; body: unknown }> {
  if (choice.handle && clickNoticeDue(answer)) {
    const result = await lineCall(
      "/v2/bot/message/reply",
      {
        replyToken: choice.handle,
        messages: [{ type: "text", text: approvalClickText(answer) }],
      },
      env,
      { leaving: undefined },
    );
    if (!result.ok) log.warn("line: a click was not answered", { error: result.message });
  }
  return { status: 200, body: { ok: true } };
}

/**
 * The loading animation (one-on-one chats only: a user id starts with "U"; groups and rooms get
 * none). A failure or a 429 is false, and the turn stops asking.
 */
async function _typing(target: LineTarget, env: PlatformEnv): Promise<boolean> {
  if (!target.to.startsWith("U")) return false;
  const result = await lineCall(
    "/v2/bot/chat/loading/start",
    {
      chatId: target.to,
      loadingSeconds: _LOADING_SECONDS,
    },
    env,
    { leaving: undefined },
  );
  return result.ok;
}

/**
 * LINE Messaging API webhooks in (signed; text `message` events from a user, or mentioning the bot
 * in a group or room; a user's images, videos, voice and files, fetched inside the turn; postbacks of baton's quick replies; redeliveries run once; events older than
 * the replay horizon refused), push messages out (the reply token expires before a turn may end; a
 * question carries quick replies), each part under a retry key so a resend can never show twice;
 * the loading animation while a turn runs.
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
  parse: (request) => _parse(request.body, request.nowSeconds),
  send: linePush,
  // An image as an image message LINE fetches from its signed link (its caption a text message
  // in the same push, under the same retry key); any other file, or no link, as text.
  // The platform fetches the signed link: MEDIA's bytes are never read for it.
  filesByLink: true,
  sendFile: (target: LineTarget, file: OutgoingFile, caption, part, env) => {
    const image = lineImageMessage(file);
    return image
      ? linePush(target, caption, part, env, [image])
      : linePush(target, fileAsText(file, caption), part, env);
  },
  // Every part carries a retry key drawn from its marker: sending it again cannot show twice.
  idempotentPart: () => true,
  answerChoice: _answerChoice,
  typing: _typing,
  fetchMedia: fetchLineMedia,
};

/** Signs a body as LINE does: base64 HMAC-SHA256 under the channel secret. For tests and tooling. */
export async function signLinePayload(
  channelSecret: string,
  body: string | Uint8Array,
): Promise<string> {
  return encodeBase64(await hmacSign(channelSecret, body));
}

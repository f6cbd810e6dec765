// Slack Events API adapter: v0 signature check, event parsing (text and files), chat.postMessage replies, previews by chat.update; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  approvalClickText,
  type Choice,
  type ClickAnswer,
  type Ingress,
  isChoiceData,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type RawRequest,
} from "../chat/mod.ts";
import {
  formField,
  ignore,
  isFormBody,
  respond,
  TIMESTAMP_TOLERANCE_SECONDS,
  timestampProblem,
} from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { findSlackPart, PART_EVENT_TYPE } from "./slack_find_part.ts";
import { slackCall } from "./slack_call.ts";
import { sendSlackFile } from "./slack_files.ts";
import { slackId, type SlackTarget, slackTarget, slackTs } from "./slack_target.ts";
import { endSlackPreview, previewSlackReply, replacePreview } from "./slack_preview.ts";
import { fetchSlackMedia, slackMedia } from "./slack_media.ts";
import { decodeHex, encodeHex, hmacSign, hmacVerify, log, withPrefix } from "../runtime/mod.ts";

const _LEADING_MENTION = /^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>\s*/i;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _envelope = z.lazy(() => z.looseObject({ type: z.string() }));

const _urlVerification = z.lazy(() =>
  z.looseObject({
    type: z.literal("url_verification"),
    challenge: z.string(),
  })
);

const _id = slackId;
const _ts = slackTs;

const _eventCallback = z.lazy(() =>
  z.looseObject({
    type: z.literal("event_callback"),
    team_id: _id.optional(),
    authorizations: z.array(z.looseObject({ user_id: z.string().optional() })).optional(),
    event: z.looseObject({ type: z.string() }),
  })
);

const _messageEvent = z.lazy(() =>
  z.looseObject({
    type: z.enum(["app_mention", "message"]),
    channel: _id,
    ts: _ts,
    user: _id,
    text: z.string(),
    team: _id.optional(),
    thread_ts: _ts.optional(),
    channel_type: z.string().optional(),
    subtype: z.unknown().optional(),
    bot_id: z.unknown().optional(),
  })
);

type _MessageEvent = z.infer<typeof _messageEvent>;

export type { SlackTarget } from "./slack_target.ts";

function _signedContent(timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return withPrefix(`v0:${timestamp}:`, body);
}

// A form-encoded `ssl_check=1` probe (slash-command setups): it carries nothing and starts nothing.
function _isSslCheck(request: RawRequest): boolean {
  return isFormBody(request.headers) && formField(request.body, "ssl_check") === "1";
}

function _isDirect(event: _MessageEvent): boolean {
  // app_mention carries no channel_type; DM conversation ids start with "D".
  return event.channel_type === "im" ||
    (event.channel_type === undefined && event.channel.startsWith("D"));
}

function _stripMention(text: string, botUserId: string | undefined, always: boolean): string {
  const match = _LEADING_MENTION.exec(text);
  if (!match) return text;
  const isBot = botUserId ? match[1] === botUserId : always;
  return isBot ? text.slice(match[0].length) : text;
}

function _logRetry(headers: Headers): void {
  const num = headers.get("x-slack-retry-num");
  if (!num) return;
  const reason = (headers.get("x-slack-retry-reason") ?? "").replace(/[^a-z_]/g, "").slice(0, 32);
  log.info("slack: redelivery", { attempt: num.slice(0, 4), reason: reason || "no reason" });
}

function _parseEvent(payload: z.infer<typeof _eventCallback>): Ingress<SlackTarget> {
  const kind = payload.event.type;
  if (kind !== "app_mention" && kind !== "message") return ignore();
  const parsed = _messageEvent.safeParse(payload.event);
  if (!parsed.success) return ignore();
  const event = parsed.data;
  // An upload (`file_share`) is a message with files; other subtypes are edits, joins, bots.
  if (event.bot_id != null || (event.subtype != null && event.subtype !== "file_share")) {
    return ignore();
  }
  const botUserId = payload.authorizations?.[0]?.user_id;
  if (botUserId && event.user === botUserId) return ignore();
  const direct = _isDirect(event);
  if (event.type === "message" && !direct) return ignore();
  const team = payload.team_id ?? event.team;
  if (!team) return ignore();
  const text = _stripMention(event.text, botUserId, event.type === "app_mention").trim();
  // Files are announced, never fetched here: the turn fetches them (`fetchMedia`).
  const media = slackMedia(payload.event);
  if (!text && !media.length) return ignore();

  const thread = direct ? event.thread_ts : (event.thread_ts ?? event.ts);
  const sessionKey = thread
    ? `slack:${team}:${event.channel}:${thread}`
    : `slack:${team}:${event.channel}`;
  const reply: SlackTarget = {
    platform: "slack",
    channel: event.channel,
    ...(thread ? { thread_ts: thread } : {}),
  };
  return {
    kind: "message",
    message: platformEvent("slack", {
      sessionKey,
      deliveryKey: `slack:${event.channel}:${event.ts}`,
      text,
      ...(media.length ? { media } : {}),
      context: {
        chat_id: event.channel,
        chat_name: "",
        thread_id: thread ?? "",
        user_id: event.user,
        user_name: event.user,
        message_id: event.ts,
      },
      reply,
      // Slack user ids are unique within a workspace; `T…/U…` names one across workspaces.
      sender: { user: `${team}/${event.user}`, name: event.user, direct },
    }),
  };
}

const _blockActions = z.lazy(() =>
  z.looseObject({
    type: z.literal("block_actions"),
    user: z.looseObject({
      id: _id,
      username: z.string().optional(),
      name: z.string().optional(),
      team_id: _id.optional(),
    }),
    team: z.looseObject({ id: _id }).nullish(),
    channel: z.looseObject({ id: _id }),
    message: z.looseObject({ ts: _ts, thread_ts: _ts.optional() }).optional(),
    container: z.looseObject({ thread_ts: _ts.optional() }).optional(),
    actions: z.array(
      z.looseObject({ value: z.string().optional(), action_ts: z.string().optional() }),
    )
      .min(1),
  })
);

/**
 * A click on baton's block buttons (`block_actions`, form field `payload`): its session is the
 * channel and thread the question was posted in, keyed as the message that started the turn.
 */
function _parseInteraction(field: string | null): Ingress<SlackTarget> {
  if (field === null) return ignore();
  const parsed = _blockActions.safeParse(parseJsonBody(new TextEncoder().encode(field)));
  if (!parsed.success) return ignore();
  const { user, team, channel, message, container, actions } = parsed.data;
  const data = actions[0].value;
  const teamId = team?.id ?? user.team_id;
  if (!isChoiceData(data) || !teamId || !message) return ignore();
  const thread = message.thread_ts ?? container?.thread_ts;
  const sessionKey = thread
    ? `slack:${teamId}:${channel.id}:${thread}`
    : `slack:${teamId}:${channel.id}`;
  const name = user.username ?? user.name ?? user.id;
  return {
    kind: "choice",
    choice: platformEvent("slack", {
      sessionKey,
      deliveryKey: `slack:click:${channel.id}:${message.ts}:${actions[0].action_ts ?? ""}`,
      data,
      context: {
        chat_id: channel.id,
        chat_name: "",
        thread_id: thread ?? "",
        user_id: user.id,
        user_name: name,
        message_id: message.ts,
      },
      reply: { platform: "slack", channel: channel.id, ...(thread ? { thread_ts: thread } : {}) },
      sender: { user: `${teamId}/${user.id}`, name, direct: channel.id.startsWith("D") },
    }),
  };
}

/** Block Kit for a question: its text as a section, then one button per choice. */
function _blocks(text: string, choices: readonly Choice[]) {
  return [
    { type: "section", text: { type: "plain_text", text: text.slice(0, 3000) } },
    {
      type: "actions",
      block_id: "baton_choices",
      elements: choices.map((choice, i) => ({
        type: "button",
        action_id: `baton_choice_${i}`,
        text: { type: "plain_text", text: choice.label },
        value: choice.data,
        ...(choice.style ? { style: choice.style } : {}),
      })),
    },
  ];
}

/**
 * Answers a click with `chat.postEphemeral`: only the clicker sees it, in the question's thread.
 * A failure is logged only: the click itself has been judged already.
 */
async function _answerChoice(
  choice: PlatformChoice<SlackTarget>,
  answer: ClickAnswer,
  env: PlatformEnv,
): Promise<{ status: number; body: unknown }> {
  const { channel, thread_ts } = choice.reply;
  const user = choice.context.user_id;
  const result = await slackCall("chat.postEphemeral", {
    channel,
    user,
    text: approvalClickText(answer),
    ...(thread_ts ? { thread_ts } : {}),
  }, env);
  if (!result.ok) log.warn("slack: a click was not answered", { error: result.message });
  // Slack wants a 200 within 3 s; the body of an interactivity answer is not shown.
  return { status: 200, body: {} };
}

/**
 * The assistant thread's status ("is thinking…"), which Slack clears when the reply is posted.
 * Only in a thread, and only for an app with the assistant scope: anything else answers
 * `ok: false`, and the status is not renewed for that turn.
 */
async function _typing(target: SlackTarget, env: PlatformEnv): Promise<boolean> {
  if (!target.thread_ts) return false;
  const result = await slackCall("assistant.threads.setStatus", {
    channel_id: target.channel,
    thread_ts: target.thread_ts,
    status: "is thinking…",
  }, env);
  return result.ok;
}

/** Signs a request body the way Slack does; returns the `X-Slack-Signature` value "v0=<hex>". For tests and tooling. */
export async function signSlackRequest(opts: {
  secret: string;
  timestamp: number;
  body: Uint8Array | string;
}): Promise<string> {
  const body = typeof opts.body === "string" ? new TextEncoder().encode(opts.body) : opts.body;
  return `v0=${
    encodeHex(await hmacSign(opts.secret, _signedContent(String(opts.timestamp), body)))
  }`;
}

/**
 * Slack Events API deliveries in (app mentions and direct messages, their files fetched inside
 * the turn: slack_media.ts) and interactivity (clicks on baton's buttons), chat.postMessage replies
 * out (a question with block buttons).
 */
export const slackAdapter: PlatformAdapter<SlackTarget> = {
  name: "slack",
  requiredEnv: ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"],
  maxMessageChars: 40000,
  asyncDelivery: false,
  replyTarget: slackTarget,

  async verify(request, env) {
    // Answered unverified, as Bolt does: the probe starts nothing and the answer reveals nothing.
    if (_isSslCheck(request)) return null;
    const signature = request.headers.get("x-slack-signature");
    const timestamp = request.headers.get("x-slack-request-timestamp");
    if (!signature || !timestamp) {
      return "missing X-Slack-Signature or X-Slack-Request-Timestamp header";
    }
    const problem = timestampProblem(timestamp, request.nowSeconds);
    if (problem === "malformed") {
      return "X-Slack-Request-Timestamp is not an integer number of seconds";
    }
    if (problem === "outside") {
      return `X-Slack-Request-Timestamp is outside ±${TIMESTAMP_TOLERANCE_SECONDS}s of now`;
    }
    const sig = signature.startsWith("v0=") ? decodeHex(signature.slice(3)) : null;
    if (!sig) return "X-Slack-Signature is not of the form v0=<hex>";
    const secret = env.SLACK_SIGNING_SECRET ?? "";
    const valid = await hmacVerify(secret, sig, _signedContent(timestamp, request.body));
    return valid ? null : "X-Slack-Signature does not match the request";
  },

  parse(request) {
    if (_isSslCheck(request)) return respond({});
    // Interactivity (a click on baton's buttons) comes form-encoded; slash commands are not served.
    if (isFormBody(request.headers)) return _parseInteraction(formField(request.body, "payload"));
    const payload = parseJsonBody(request.body);
    _logRetry(request.headers);
    const envelope = _envelope.safeParse(payload);
    if (!envelope.success) return ignore();
    if (envelope.data.type === "url_verification") {
      const handshake = _urlVerification.safeParse(payload);
      return handshake.success ? respond({ challenge: handshake.data.challenge }) : ignore();
    }
    const callback = _eventCallback.safeParse(payload);
    return callback.success ? _parseEvent(callback.data) : ignore();
  },

  async send(target, text, part, env) {
    const { channel, thread_ts } = target;
    // The part's name rides as message metadata, invisible in the chat, readable back (findPart).
    const metadata = part.marker
      ? { metadata: { event_type: PART_EVENT_TYPE, event_payload: { part: part.marker } } }
      : {};
    // The first part of a reply its turn previewed: the preview message becomes the reply.
    if (part.replaces) {
      const edited = await replacePreview(target, part.replaces, text, metadata, part, env);
      if (edited) return edited;
    }
    return await slackCall(
      "chat.postMessage",
      {
        channel,
        text,
        ...(thread_ts ? { thread_ts } : {}),
        ...metadata,
        // With blocks, `text` is the notification's fallback; the section shows it in the chat.
        ...(part.choices?.length ? { blocks: _blocks(text, part.choices) } : {}),
      },
      env,
      { leaving: part.leaving },
    );
  },

  // A file goes through the external upload flow into the same channel and thread.
  sendFile: sendSlackFile,
  findPart: findSlackPart,
  fetchMedia: fetchSlackMedia,
  answerChoice: _answerChoice,
  typing: _typing,
  preview: previewSlackReply,
  endPreview: endSlackPreview,
};

// Slack Events API adapter: v0 signature check, event parsing, chat.postMessage replies; runtime-neutral (fetch, Web Crypto).
import { z } from "zod";
import {
  type Ingress,
  parseJsonBody,
  type PlatformAdapter,
  type PlatformEnv,
  type RawRequest,
  type ReplyTarget,
  sendRequest,
  type SendResult,
} from "../platform.ts";

const _TOLERANCE_SECONDS = 300;
const _DEFAULT_API_ROOT = "https://slack.com/api";
const _HMAC = { name: "HMAC", hash: "SHA-256" };
const _DIGITS = /^[0-9]{1,15}$/;
const _HEX = /^(?:[0-9a-fA-F]{2})+$/;
const _ERROR_CODE = /^[a-z0-9_]{1,64}$/;
const _LEADING_MENTION = /^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>\s*/i;
const _encoder = new TextEncoder();
const _IGNORED: Ingress = { kind: "respond", status: 200, body: { ok: true } };

const _envelope = z.looseObject({ type: z.string() });

const _urlVerification = z.looseObject({
  type: z.literal("url_verification"),
  challenge: z.string(),
});

const _id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
const _ts = z.string().regex(/^[0-9]{1,20}\.[0-9]{1,12}$/);

const _eventCallback = z.looseObject({
  type: z.literal("event_callback"),
  team_id: _id.optional(),
  authorizations: z.array(z.looseObject({ user_id: z.string().optional() })).optional(),
  event: z.looseObject({ type: z.string() }),
});

const _messageEvent = z.looseObject({
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
});

type _MessageEvent = z.infer<typeof _messageEvent>;

// Where a Slack reply goes: the channel, and the thread for threaded conversations.
interface _SlackTarget extends ReplyTarget {
  platform: "slack";
  channel: string;
  thread_ts?: string;
}

function _signedContent(timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = _encoder.encode(`v0:${timestamp}:`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix, 0);
  data.set(body, prefix.length);
  return data;
}

function _decodeHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!_HEX.test(text)) return null;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function _encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function _importKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", _encoder.encode(secret), _HMAC, false, [usage]);
}

function _isFormBody(request: RawRequest): boolean {
  const type = request.headers.get("content-type") ?? "";
  return type.toLowerCase().startsWith("application/x-www-form-urlencoded");
}

// A form-encoded `ssl_check=1` probe (slash-command setups): it carries nothing and starts nothing.
function _isSslCheck(request: RawRequest): boolean {
  if (!_isFormBody(request)) return false;
  return new URLSearchParams(new TextDecoder().decode(request.body)).get("ssl_check") === "1";
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
  console.log(`slack: redelivery ${num.slice(0, 4)} (${reason || "no reason"})`);
}

function _parseEvent(payload: z.infer<typeof _eventCallback>): Ingress {
  const kind = payload.event.type;
  if (kind !== "app_mention" && kind !== "message") return _IGNORED;
  const parsed = _messageEvent.safeParse(payload.event);
  if (!parsed.success) return _IGNORED;
  const event = parsed.data;
  if (event.bot_id != null || event.subtype != null) return _IGNORED;
  const botUserId = payload.authorizations?.[0]?.user_id;
  if (botUserId && event.user === botUserId) return _IGNORED;
  const direct = _isDirect(event);
  if (event.type === "message" && !direct) return _IGNORED;
  const team = payload.team_id ?? event.team;
  if (!team) return _IGNORED;
  const text = _stripMention(event.text, botUserId, event.type === "app_mention").trim();
  if (!text) return _IGNORED;

  const thread = direct ? event.thread_ts : (event.thread_ts ?? event.ts);
  const sessionKey = thread
    ? `slack:${team}:${event.channel}:${thread}`
    : `slack:${team}:${event.channel}`;
  const reply: _SlackTarget = {
    platform: "slack",
    channel: event.channel,
    ...(thread ? { thread_ts: thread } : {}),
  };
  return {
    kind: "message",
    message: {
      sessionKey,
      deliveryKey: `slack:${event.channel}:${event.ts}`,
      text,
      context: {
        chat_id: event.channel,
        chat_name: "",
        thread_id: thread ?? "",
        user_id: event.user,
        user_name: event.user,
        message_id: event.ts,
      },
      reply,
    },
  };
}

/** Signs a request body the way Slack does; returns the `X-Slack-Signature` value "v0=<hex>". For tests and tooling. */
export async function signSlackRequest(opts: {
  secret: string;
  timestamp: number;
  body: Uint8Array | string;
}): Promise<string> {
  const key = await _importKey(opts.secret, "sign");
  const body = typeof opts.body === "string" ? _encoder.encode(opts.body) : opts.body;
  const sig = await crypto.subtle.sign("HMAC", key, _signedContent(String(opts.timestamp), body));
  return `v0=${_encodeHex(new Uint8Array(sig))}`;
}

/** Slack Events API deliveries in (app mentions and direct messages), chat.postMessage replies out. */
export const slackAdapter: PlatformAdapter = {
  name: "slack",
  requiredEnv: ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"],
  maxMessageChars: 40000,
  asyncDelivery: false,

  async verify(request: RawRequest, env: PlatformEnv): Promise<string | null> {
    // Answered unverified, as Bolt does: the probe starts nothing and the answer reveals nothing.
    if (_isSslCheck(request)) return null;
    const signature = request.headers.get("x-slack-signature");
    const timestamp = request.headers.get("x-slack-request-timestamp");
    if (!signature || !timestamp) {
      return "missing X-Slack-Signature or X-Slack-Request-Timestamp header";
    }
    if (!_DIGITS.test(timestamp)) {
      return "X-Slack-Request-Timestamp is not an integer number of seconds";
    }
    if (Math.abs(request.nowSeconds - Number(timestamp)) > _TOLERANCE_SECONDS) {
      return `X-Slack-Request-Timestamp is outside ±${_TOLERANCE_SECONDS}s of now`;
    }
    const sig = signature.startsWith("v0=") ? _decodeHex(signature.slice(3)) : null;
    if (!sig) return "X-Slack-Signature is not of the form v0=<hex>";
    const key = await _importKey(env.SLACK_SIGNING_SECRET ?? "", "verify");
    const valid = await crypto.subtle.verify(
      "HMAC",
      key,
      sig,
      _signedContent(timestamp, request.body),
    );
    return valid ? null : "X-Slack-Signature does not match the request";
  },

  parse(request: RawRequest): Ingress {
    if (_isSslCheck(request)) return { kind: "respond", status: 200, body: {} };
    // Slash commands and interactivity (form bodies) are not served here.
    if (_isFormBody(request)) return _IGNORED;
    const payload = parseJsonBody(request.body);
    _logRetry(request.headers);
    const envelope = _envelope.safeParse(payload);
    if (!envelope.success) return _IGNORED;
    if (envelope.data.type === "url_verification") {
      const handshake = _urlVerification.safeParse(payload);
      return handshake.success
        ? { kind: "respond", status: 200, body: { challenge: handshake.data.challenge } }
        : _IGNORED;
    }
    const callback = _eventCallback.safeParse(payload);
    return callback.success ? _parseEvent(callback.data) : _IGNORED;
  },

  async send(
    target: ReplyTarget,
    text: string,
    _part: { index: number; count: number },
    env: PlatformEnv,
  ): Promise<SendResult> {
    const { channel, thread_ts } = target as _SlackTarget;
    const root = (env.SLACK_API_ROOT || _DEFAULT_API_ROOT).replace(/\/+$/, "");
    const result = await sendRequest(`${root}/chat.postMessage`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${env.SLACK_BOT_TOKEN ?? ""}`,
        "content-type": "application/json; charset=utf-8",
      },
      body: JSON.stringify({ channel, text, ...(thread_ts ? { thread_ts } : {}) }),
    });
    if (!result.ok) {
      return {
        ok: false,
        status: result.status,
        retryable: result.retryable,
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
        message: result.status === 0
          ? "could not reach the Slack API"
          : `Slack chat.postMessage answered HTTP ${result.status}`,
      };
    }
    const body = result.body as { ok?: unknown; error?: unknown } | undefined;
    if (body?.ok === true) return { ok: true };
    const code = typeof body?.error === "string" && _ERROR_CODE.test(body.error)
      ? body.error
      : "unknown_error";
    return {
      ok: false,
      status: 200,
      retryable: false,
      message: `Slack chat.postMessage failed: ${code}`,
    };
  },
};

// Twilio Messaging adapter (SMS, and WhatsApp through Twilio): X-Twilio-Signature form webhooks in, empty TwiML acks, Messages REST API out; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  type Ingress,
  type OutgoingFile,
  type PartSend,
  PayloadError,
  type PlatformAdapter,
  type PlatformEnv,
  type SendResult,
  type WebhookAnswer,
} from "../chat/mod.ts";
import { apiRoot, detail, isFormBody, jsonField, retryAfterHeader, sendRequest } from "./_kit.ts";
import { decodeBase64, encodeBase64, hmacSign, hmacVerify } from "../runtime/mod.ts";
import { platformEvent } from "./_platform_event.ts";
import { fileAsText } from "./_file_out.ts";
import { twilioMediaUrl } from "./twilio_files.ts";
import { UNDATED_KEY_MEMORY_MS } from "./_replay_horizon.ts";
import { fetchTwilioMedia, twilioMedia } from "./twilio_media.ts";

const _HEADER = "x-twilio-signature";
const _DEFAULT_API_ROOT = "https://api.twilio.com";
/** Twilio's 429 (error 20429) often names no wait. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;
const _SID = /^[A-Z]{2}[0-9a-fA-F]{32}$/;
/** A phone number, short code or channel address: `+15551234567`, `12345`, `whatsapp:+1555…`. */
const _ADDRESS = /^(?:[a-z]+:)?\+?[0-9A-Za-z_.-]{1,64}$/;

/** The empty TwiML document: acknowledged, and Twilio sends nothing back by itself. */
export const EMPTY_TWIML = "<Response/>";
const _ACK: WebhookAnswer = { status: 200, body: EMPTY_TWIML, contentType: "text/xml" };

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _inbound = z.lazy(() =>
  z.looseObject({
    MessageSid: z.string().regex(_SID),
    AccountSid: z.string().regex(_SID),
    From: z.string().regex(_ADDRESS),
    To: z.string().regex(_ADDRESS),
    Body: z.string(),
    ProfileName: z.string().max(256).optional(),
  })
);

/** Where a Twilio reply goes: back from the number the message was sent to, to its sender. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("twilio"),
    from: z.string().regex(_ADDRESS),
    to: z.string().regex(_ADDRESS),
  })
);

/** A Twilio reply target, as stored with the message. */
export type TwilioTarget = z.infer<typeof _target>;

/** The form's parameters, or `PayloadError` when the body is not UTF-8. */
function _params(body: Uint8Array): URLSearchParams {
  try {
    return new URLSearchParams(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body),
    );
  } catch {
    throw new PayloadError("request body is not UTF-8 form data");
  }
}

/**
 * What Twilio signs: the full URL it called (with the query), then each POST parameter's name and
 * value, sorted by name (then value), by code unit.
 */
export function twilioSignedContent(url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([a, x], [b, y]) =>
    a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0
  );
  return url + pairs.map(([name, value]) => name + value).join("");
}

/**
 * The URLs Twilio may have signed for a request to `url`: as given, without its port, and with the
 * scheme's default port where it names none. Twilio drops the port of an HTTPS SMS callback's URL
 * before signing but keeps it elsewhere, and its own `validateRequest` accepts each of these: a
 * `PUBLIC_URL` with a port (`https://bot.example.com:8443`) must not refuse every message.
 */
export function twilioSignedUrls(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return [url];
  const [, scheme, authority, rest] = match;
  // A port follows the host (after an IPv6 literal's closing bracket), never a user name.
  const portAt = /:[0-9]*$/.exec(authority.slice(authority.lastIndexOf("]") + 1));
  const host = portAt ? authority.slice(0, authority.length - portAt[0].length) : authority;
  const defaultPort = scheme.toLowerCase() === "https://" ? ":443" : ":80";
  const withPort = portAt ? url : scheme + host + defaultPort + rest;
  return [...new Set([url, scheme + host + rest, withPort])];
}

function _parse(body: Uint8Array, env: PlatformEnv): Ingress<TwilioTarget> {
  const params = _params(body);
  const ack = { kind: "respond", ..._ACK } as const;
  // Status callbacks (queued, sent, delivered, failed…): acknowledged, nothing more.
  if (params.has("MessageStatus")) return ack;
  const parsed = _inbound.safeParse(Object.fromEntries(params));
  if (!parsed.success) return ack;
  const { MessageSid, AccountSid, From, To, Body, ProfileName } = parsed.data;
  // Another account's message, signed with its own token only if the tokens match: never ours.
  if (AccountSid !== env.TWILIO_ACCOUNT_SID) return ack;
  const text = Body.trim();
  // An MMS's media: announced, fetched inside the turn (twilio_media.ts); a picture alone is a turn.
  const media = twilioMedia(params);
  if (!text && !media.length) return ack;
  const name = ProfileName ?? From;
  return {
    kind: "message",
    message: platformEvent("twilio", {
      sessionKey: `twilio:${To}:${From}`,
      deliveryKey: `twilio:${MessageSid}`,
      // The signature covers the URL and the form, no time: a captured SMS verifies for ever and
      // cannot be aged, so its MessageSid is kept a month rather than the inbox's day.
      keyMemoryMs: UNDATED_KEY_MEMORY_MS,
      text,
      ...(media.length ? { media } : {}),
      context: {
        chat_id: From,
        chat_name: name,
        thread_id: "",
        user_id: From,
        user_name: name,
        message_id: MessageSid,
      },
      reply: { platform: "twilio", from: To, to: From },
      // A text message is always between one person and the number.
      sender: { user: From, name, direct: true },
    }),
  };
}

/** A reply part as a message: `text`, with `media` (a file's signed link) as its MMS `MediaUrl`. */
async function _send(
  target: TwilioTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
  media?: string,
): Promise<SendResult> {
  const sid = env.TWILIO_ACCOUNT_SID ?? "";
  const token = env.TWILIO_AUTH_TOKEN ?? "";
  if (!_SID.test(sid)) {
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "TWILIO_ACCOUNT_SID is not an AC… SID",
    };
  }
  const basic = btoa(`${sid}:${token}`);
  const root = apiRoot(env, "TWILIO_API_ROOT", _DEFAULT_API_ROOT);
  return await sendRequest(`${root}/2010-04-01/Accounts/${sid}/Messages.json`, {
    method: "POST",
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      To: target.to,
      From: target.from,
      // A media message needs no body.
      ...(media ? { MediaUrl: media } : {}),
      ...(text || !media ? { Body: text } : {}),
    }).toString(),
  }, {
    api: "Twilio Messages API",
    leaving: part.leaving,
    secrets: [token, basic],
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }) => {
      const code = jsonField(body, "code");
      return `the Twilio Messages API answered ${status}` +
        (typeof code === "number" ? ` (error ${code})` : "") + detail(jsonField(body, "message"));
    },
  });
}

/**
 * Twilio Messaging webhooks in (form-encoded, X-Twilio-Signature over the public URL and sorted
 * parameters; incoming SMS, MMS (its media fetched inside the turn) or WhatsApp messages, each run
 * once: its MessageSid kept a month;
 * status callbacks acknowledged), every delivery answered with empty TwiML, replies through the
 * Messages REST API.
 */
export const twilioAdapter: PlatformAdapter<TwilioTarget> = {
  name: "twilio",
  requiredEnv: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN"],
  // Twilio refuses a longer Body on every channel (error 21617).
  maxMessageChars: 1600,
  asyncDelivery: false,
  replyTarget: _target,
  acknowledgement: _ACK,
  async verify(request, env) {
    const token = env.TWILIO_AUTH_TOKEN;
    if (!token) return "TWILIO_AUTH_TOKEN is not set";
    const given = (request.headers.get(_HEADER) ?? "").trim();
    if (!given) return `missing ${_HEADER} header`;
    const signature = decodeBase64(given, 20);
    if (!signature) return `malformed ${_HEADER} (expected base64 of 20 bytes)`;
    // Only form parameters are signed: any other body would go unchecked.
    if (!isFormBody(request.headers)) {
      return "Twilio webhooks must be application/x-www-form-urlencoded";
    }
    let params: URLSearchParams;
    try {
      params = _params(request.body);
    } catch {
      return `${_HEADER} does not match the request`;
    }
    let ok = false;
    for (const url of twilioSignedUrls(request.url)) {
      const content = new TextEncoder().encode(twilioSignedContent(url, params));
      if (await hmacVerify(token, signature, content, "SHA-1")) ok = true;
    }
    return ok
      ? null
      : `${_HEADER} does not match the request (behind a proxy or custom domain, set PUBLIC_URL ` +
        "to the origin Twilio calls)";
  },
  parse: (request, env) => _parse(request.body, env),
  send: _send,
  // An image as MMS media Twilio fetches from its signed link; any other file, or no link, as text.
  // The platform fetches the signed link: MEDIA's bytes are never read for it.
  filesByLink: true,
  sendFile: (target: TwilioTarget, file: OutgoingFile, caption, part, env) => {
    const media = twilioMediaUrl(file);
    return media
      ? _send(target, caption, part, env, media)
      : _send(target, fileAsText(file, caption), part, env);
  },
  fetchMedia: fetchTwilioMedia,
};

/** Signs a request as Twilio does: base64 HMAC-SHA1 under the auth token. For tests and tooling. */
export async function signTwilioRequest(
  authToken: string,
  url: string,
  params: URLSearchParams,
): Promise<string> {
  return encodeBase64(await hmacSign(authToken, twilioSignedContent(url, params), "SHA-1"));
}

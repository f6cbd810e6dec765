// Twilio's media: an MMS's (or WhatsApp-through-Twilio's) `MediaUrl0…N` as announced media, and their download with HTTP basic auth (Account SID : Auth Token), following Twilio's redirect to its CDN without the credentials; runtime-neutral (fetch).
import type { PlatformEnv } from "../chat/mod.ts";
import {
  downloadMedia,
  type FetchedMedia,
  overLimit,
  type PlatformMedia,
  type PlatformMediaKind,
  readCapped,
} from "../media/mod.ts";
import {
  errorText,
  fetchOut,
  HTTP_OUT_TIMEOUT_MS,
  RATE_LIMIT_WAIT_OUT,
  redact,
} from "../runtime/mod.ts";
import { apiRoot } from "./_kit.ts";

const _DEFAULT_API_ROOT = "https://api.twilio.com";
/** Twilio sends at most ten media with a message. */
const _MAX_MEDIA = 10;
const _API = "Twilio media API";

/** A content type's medium: audio is what a phone records (a voice note), anything else a file. */
function _kind(type: string): PlatformMediaKind {
  if (type.startsWith("image/")) return "photo";
  if (type.startsWith("audio/")) return "voice";
  if (type.startsWith("video/")) return "video";
  return "document";
}

function _parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * The media of an incoming message, as announced (nothing fetched): `NumMedia` (at most ten)
 * entries of `MediaUrl<i>` (an http(s) URL) and `MediaContentType<i>`. A malformed entry is left
 * out, never a refusal of the message.
 */
export function twilioMedia(params: URLSearchParams): PlatformMedia[] {
  const count = Math.min(Number(params.get("NumMedia") ?? "0") || 0, _MAX_MEDIA);
  const media: PlatformMedia[] = [];
  for (let i = 0; i < count; i++) {
    const url = params.get(`MediaUrl${i}`) ?? "";
    if (!/^https?:\/\/[^\s]{1,4000}$/i.test(url) || !_parses(url)) continue;
    const type = (params.get(`MediaContentType${i}`) ?? "").slice(0, 128);
    media.push({ platform: "twilio", file: url, kind: _kind(type), ...(type ? { type } : {}) });
  }
  return media;
}

/**
 * Downloads a Twilio medium inside the turn: its `MediaUrl` with basic auth — but only on the
 * REST API's own origin (`TWILIO_API_ROOT`); any other URL gets no credentials — then, where
 * Twilio answers with a redirect to its CDN, that URL without them. At most `maxBytes`; neither
 * the token nor the URLs appear in a failure.
 */
export async function fetchTwilioMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  const sid = env.TWILIO_ACCOUNT_SID ?? "";
  const token = env.TWILIO_AUTH_TOKEN ?? "";
  const basic = btoa(`${sid}:${token}`);
  const secrets = [token, basic];
  const ours = new URL(item.file).origin ===
    new URL(apiRoot(env, "TWILIO_API_ROOT", _DEFAULT_API_ROOT)).origin;
  const headers: Record<string, string> = ours && token ? { authorization: `Basic ${basic}` } : {};
  let res: Response;
  try {
    res = await fetchOut(item.file, { headers, redirect: "manual", signal: options.signal }, {
      api: _API,
      timeoutMs: HTTP_OUT_TIMEOUT_MS,
      secrets,
      waitOut: RATE_LIMIT_WAIT_OUT,
    });
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    return {
      ok: false,
      why: `download failed: ${redact(errorText(error), secrets).slice(0, 200)}`,
    };
  }
  const location = res.headers.get("location");
  if (res.status >= 300 && res.status < 400 && location) {
    await res.body?.cancel();
    // The CDN's signed URL needs no credentials, and must never be handed them.
    return await downloadMedia(new URL(location, item.file).href, {}, {
      api: "Twilio media CDN",
      ...options,
      secrets,
    });
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { ok: false, why: `download failed: the ${_API} answered ${res.status}` };
  }
  try {
    const bytes = await readCapped(res, options.maxBytes);
    return bytes ? { ok: true, bytes } : { ok: false, why: overLimit(options.maxBytes) };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    return {
      ok: false,
      why: `download failed: ${redact(errorText(error), secrets).slice(0, 200)}`,
    };
  }
}

// WhatsApp's media: a Cloud API message's image, audio, voice note, document, sticker or video as announced media, and their download (media id → Graph URL → bytes, both with the access token); runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import {
  type FetchedMedia,
  overLimit,
  type PlatformMedia,
  type PlatformMediaKind,
} from "../media/mod.ts";
import { RATE_LIMIT_WAIT_OUT } from "../runtime/mod.ts";
import { apiRoot, detail, jsonField, sendRequest } from "./_kit.ts";
import { bareType, downloadFromPlatform } from "./_file_download.ts";

const _DEFAULT_API_ROOT = "https://graph.facebook.com/v21.0";
/** Media ids are Graph object ids: digits. */
const _MEDIA_ID = /^[0-9]{1,64}$/;
/** Where Graph's media URLs point (`lookaside.fbsbx.com`) and Meta serves files from. */
const _FILE_HOSTS = ["fbsbx.com", "facebook.com", "whatsapp.net", "fbcdn.net"];

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _media = z.lazy(() =>
  z.looseObject({
    id: z.string().regex(_MEDIA_ID),
    mime_type: z.string().optional(),
    filename: z.string().optional(),
    caption: z.string().optional(),
    /** An audio message recorded in the app (a voice note). */
    voice: z.boolean().optional(),
    /** A sticker that moves. */
    animated: z.boolean().optional(),
  })
);

/** The message types that carry media, each under its own key. */
const _TYPES = ["image", "audio", "voice", "document", "sticker", "video"] as const;

/**
 * The medium of a Cloud API message (`type` image, audio — `voice: true` for a voice note —,
 * document, sticker or video, its object under that key; `voice` accepted as a type too), as
 * announced (nothing fetched): the media id, the stated type, a document's file name, and the
 * caption (images, videos, documents). Null for any other message or a malformed medium.
 */
export function whatsappMedia(
  message: { type: string } & Record<string, unknown>,
): { media: PlatformMedia; caption: string } | null {
  const type = _TYPES.find((t) => t === message.type);
  if (!type) return null;
  const parsed = _media.safeParse(message[type]);
  if (!parsed.success) return null;
  const m = parsed.data;
  const stated = bareType(m.mime_type);
  const kind: PlatformMediaKind = type === "sticker"
    ? (m.animated ? "animated_sticker" : "sticker")
    : type === "image"
    ? "photo"
    : type === "video"
    ? "video"
    : type === "document"
    ? "document"
    : type === "voice" || m.voice === true
    ? "voice"
    : "audio";
  return {
    media: {
      platform: "whatsapp",
      file: m.id,
      kind,
      ...(m.filename ? { name: m.filename.slice(0, 256) } : {}),
      ...(stated ? { type: stated } : {}),
    },
    caption: m.caption ?? "",
  };
}

/**
 * Downloads a WhatsApp medium inside the turn: `GET /<media-id>` on the Graph API with the access
 * token for its short-lived `url` and size (checked against `maxBytes` before any byte), then that
 * URL with the token too, on Meta's hosts only (or `WHATSAPP_API_ROOT`'s). The token is in no
 * failure.
 */
export async function fetchWhatsappMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  const token = env.WHATSAPP_ACCESS_TOKEN ?? "";
  if (!token) return { ok: false, why: "the access token is not set up" };
  if (!_MEDIA_ID.test(item.file)) return { ok: false, why: "WhatsApp named no medium" };
  const root = apiRoot(env, "WHATSAPP_API_ROOT", _DEFAULT_API_ROOT);
  const auth = { authorization: `Bearer ${token}` };
  let found: { url?: unknown; size?: unknown } = {};
  const asked = await sendRequest(`${root}/${item.file}`, {
    method: "GET",
    headers: auth,
    signal: options.signal,
  }, {
    api: "WhatsApp Cloud API",
    // A look-up, not a reply part: nothing to mark, and asking again is harmless.
    leaving: undefined,
    idempotent: true,
    secrets: [token],
    // A 429 asks for a wait: waited out within the media deadline, then asked again.
    waitOut: RATE_LIMIT_WAIT_OUT,
    answered: ({ body }) => {
      found = { url: jsonField(body, "url"), size: jsonField(body, "file_size") };
    },
    describe: ({ status, body }) => {
      const code = jsonField(body, "error", "code");
      return `the WhatsApp Cloud API answered ${status}` +
        (typeof code === "number" ? ` (error ${code})` : "") +
        detail(jsonField(body, "error", "message"));
    },
  });
  if (!asked.ok) return { ok: false, why: `download failed: ${asked.message}` };
  if (typeof found.url !== "string" || found.url === "") {
    return { ok: false, why: "download failed: WhatsApp named no link to the medium" };
  }
  if (typeof found.size === "number" && found.size > options.maxBytes) {
    return { ok: false, why: overLimit(options.maxBytes) };
  }
  return await downloadFromPlatform(found.url, {
    api: "WhatsApp media server",
    hosts: _FILE_HOSTS,
    root,
    headers: auth,
    maxBytes: options.maxBytes,
    signal: options.signal,
    secrets: [token],
  });
}

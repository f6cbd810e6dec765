// Telegram's media: a message's photo, document, sticker, voice, audio, video and video note as announced media, and their download through the Bot API's getFile with the bot token; runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import {
  downloadMedia,
  type FetchedMedia,
  overLimit,
  type PlatformMedia,
  type PlatformMediaKind,
} from "../media/mod.ts";
import { RATE_LIMIT_WAIT_OUT, type WaitOut } from "../runtime/mod.ts";
import { apiRoot, detail, jsonField, sendRequest, TELEGRAM_WAIT_FROM } from "./_kit.ts";

const _DEFAULT_API_ROOT = "https://api.telegram.org";
const _TOKEN = /^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;
/**
 * The media wait-out, its wait read where Telegram states it (`parameters.retry_after` in the
 * body, not always a Retry-After header): 1 s is the fallback only, and a wait over the cap is
 * answered at once ("Telegram getFile answered 429: Too Many Requests: retry after 30").
 */
const _WAIT_OUT: WaitOut = { ...RATE_LIMIT_WAIT_OUT, waitFrom: TELEGRAM_WAIT_FROM };

/** The fields every Telegram file has, and those some kinds add. */
function _fileSchema() {
  return z.looseObject({
    file_id: z.string().min(1).max(512),
    file_size: z.number().int().nonnegative().optional(),
    file_name: z.string().optional(),
    mime_type: z.string().optional(),
    duration: z.number().optional(),
  });
}

/** A message's media fields, built on the first parse (`z.lazy`): a start-up builds none. */
const _media = z.lazy(() => {
  const file = _fileSchema();
  const sticker = file.extend({
    is_animated: z.boolean().optional(),
    is_video: z.boolean().optional(),
  });
  return z.looseObject({
    photo: z.array(file).optional(),
    document: file.optional(),
    animation: file.optional(),
    sticker: sticker.optional(),
    voice: file.optional(),
    audio: file.optional(),
    video: file.optional(),
    video_note: file.optional(),
    media_group_id: z.string().min(1).max(256).optional(),
  });
});

/**
 * The media of a Telegram message, as announced (nothing fetched): a photo's largest size (the
 * last of `photo`), a document, a sticker (an image; an animated or video sticker as one not
 * read), a voice note, an audio file, a video or GIF animation, a video note. A malformed field
 * is left out, never a refusal of the message.
 */
export function telegramMedia(message: unknown): { media: PlatformMedia[]; album?: string } {
  const parsed = _media.safeParse(message);
  if (!parsed.success) return { media: [] };
  const m = parsed.data;
  const item = (
    kind: PlatformMediaKind,
    file: z.infer<ReturnType<typeof _fileSchema>>,
  ): PlatformMedia => ({
    platform: "telegram",
    file: file.file_id,
    kind,
    ...(file.file_name ? { name: file.file_name.slice(0, 256) } : {}),
    ...(file.mime_type ? { type: file.mime_type.slice(0, 128) } : {}),
    ...(file.file_size !== undefined ? { size: file.file_size } : {}),
    ...(file.duration !== undefined ? { seconds: file.duration } : {}),
  });
  const media: PlatformMedia[] = [];
  const largest = m.photo?.at(-1);
  if (largest) media.push(item("photo", largest));
  // A GIF animation comes with its `document` too: one medium, a video.
  if (m.animation) media.push(item("video", m.animation));
  else if (m.document) media.push(item("document", m.document));
  if (m.sticker) {
    const moving = m.sticker.is_animated === true || m.sticker.is_video === true;
    media.push(item(moving ? "animated_sticker" : "sticker", m.sticker));
  }
  if (m.voice) media.push(item("voice", m.voice));
  if (m.audio) media.push(item("audio", m.audio));
  if (m.video) media.push(item("video", m.video));
  if (m.video_note) media.push(item("video_note", m.video_note));
  return { media, ...(m.media_group_id && media.length ? { album: m.media_group_id } : {}) };
}

/**
 * Downloads a Telegram file inside the turn: `getFile` for its `file_path` (and size, checked
 * against `maxBytes` before any byte), then `<root>/file/bot<token>/<file_path>` within
 * `maxBytes`. The token is in both URLs and in no failure.
 */
export async function fetchTelegramMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  const token = env.TELEGRAM_BOT_TOKEN ?? "";
  if (!_TOKEN.test(token)) return { ok: false, why: "the bot token is not set up" };
  const secrets = [token, token.slice(token.indexOf(":") + 1)];
  const root = apiRoot(env, "TELEGRAM_API_ROOT", _DEFAULT_API_ROOT);
  let found: { path?: unknown; size?: unknown } = {};
  const asked = await sendRequest(`${root}/bot${token}/getFile`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ file_id: item.file }),
    signal: options.signal,
  }, {
    api: "Telegram Bot API",
    // A look-up, not a reply part: nothing to mark, and asking again is harmless.
    leaving: undefined,
    idempotent: true,
    secrets,
    // Telegram's 429 asks for a wait: waited out within the media deadline, then asked again.
    waitOut: _WAIT_OUT,
    refused: ({ body }) => jsonField(body, "ok") === false,
    answered: ({ body }) => {
      found = {
        path: jsonField(body, "result", "file_path"),
        size: jsonField(body, "result", "file_size"),
      };
    },
    describe: ({ status, body }) =>
      `Telegram getFile answered ${status}${detail(jsonField(body, "description"))}`,
  });
  if (!asked.ok) return { ok: false, why: `download failed: ${asked.message}` };
  if (typeof found.path !== "string" || found.path === "") {
    return { ok: false, why: "download failed: Telegram named no file" };
  }
  if (typeof found.size === "number" && found.size > options.maxBytes) {
    return { ok: false, why: overLimit(options.maxBytes) };
  }
  const path = found.path.split("/").map(encodeURIComponent).join("/");
  return await downloadMedia(`${root}/file/bot${token}/${path}`, {}, {
    api: "Telegram file server",
    maxBytes: options.maxBytes,
    signal: options.signal,
    secrets,
    waitOut: _WAIT_OUT,
  });
}

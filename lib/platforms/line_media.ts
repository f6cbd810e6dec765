// LINE's media: image, video, audio and file message events as announced media, and their download from the Messaging API's content endpoint (api-data host) with the channel access token; runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import {
  downloadMedia,
  type FetchedMedia,
  type PlatformMedia,
  type PlatformMediaKind,
} from "../media/mod.ts";
import { apiRoot } from "./_kit.ts";

/** Content is served from its own host, not the Messaging API's (`api.line.me`). */
const _DEFAULT_DATA_API_ROOT = "https://api-data.line.me";
const _ID = /^[A-Za-z0-9_-]{1,64}$/;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
/** Where the content is: LINE's own (fetched by message id), or an external https URL. */
const _provider = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    originalContentUrl: z.url({ protocol: /^https$/ }).max(2048).optional(),
  })
);

const _content = z.lazy(() =>
  z.looseObject({
    type: z.enum(["image", "video", "audio", "file"]),
    id: z.string().regex(_ID),
    contentProvider: _provider.optional(),
    /** Milliseconds (video, audio). */
    duration: z.number().nonnegative().optional(),
    fileName: z.string().optional(),
    fileSize: z.number().int().nonnegative().optional(),
    /** Several images sent at once: one set, each its own event. */
    imageSet: z.looseObject({ id: z.string().min(1).max(128) }).optional(),
  })
);

/** A LINE message type as a medium's kind: an audio message is what the app records, a voice note. */
const _KINDS: Record<z.infer<typeof _content>["type"], PlatformMediaKind> = {
  image: "photo",
  video: "video",
  audio: "voice",
  file: "document",
};

/**
 * The medium of a LINE message (`image`, `video`, `audio`, `file`), as announced (nothing
 * fetched), or null for any other type (text, sticker, location) or a malformed one. Images sent
 * together (one `imageSet`) are one album: one turn.
 */
export function lineMedia(message: unknown): { media: PlatformMedia[]; album?: string } | null {
  const parsed = _content.safeParse(message);
  if (!parsed.success) return null;
  const m = parsed.data;
  const external = m.contentProvider?.type === "external"
    ? m.contentProvider.originalContentUrl
    : undefined;
  const item: PlatformMedia = {
    platform: "line",
    // LINE's content by message id; an external provider's by its (https) URL.
    file: external ?? m.id,
    kind: _KINDS[m.type],
    // The app records voice as M4A: stated, so that a deployment without transcription says so
    // before any byte is fetched.
    ...(m.type === "audio" ? { type: "audio/mp4" } : {}),
    ...(m.fileName ? { name: m.fileName.slice(0, 256) } : {}),
    ...(m.fileSize !== undefined ? { size: m.fileSize } : {}),
    ...(m.duration !== undefined ? { seconds: m.duration / 1000 } : {}),
  };
  return { media: [item], ...(m.imageSet ? { album: `line:${m.imageSet.id}` } : {}) };
}

/**
 * Downloads a LINE message's content inside the turn: `GET <LINE_DATA_API_ROOT>/v2/bot/message/
 * {id}/content` with the channel access token (never in a failure), or an external provider's
 * https URL without it; at most `maxBytes`.
 */
export function fetchLineMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  if (item.file.startsWith("https://")) {
    return downloadMedia(item.file, {}, { api: "content provider's server", ...options });
  }
  const token = env.LINE_CHANNEL_ACCESS_TOKEN ?? "";
  if (!token) return Promise.resolve({ ok: false, why: "the channel access token is not set up" });
  const root = apiRoot(env, "LINE_DATA_API_ROOT", _DEFAULT_DATA_API_ROOT);
  return downloadMedia(
    `${root}/v2/bot/message/${encodeURIComponent(item.file)}/content`,
    { headers: { authorization: `Bearer ${token}` } },
    { api: "LINE content API", ...options, secrets: [token] },
  );
}

// A message's platform media made readable inside its turn: each fetched once, typed by its bytes, stored in MEDIA as a reference, or named as unread; runtime-neutral.
import { mediaReading, mediaTextRefusal } from "./derive_text.ts";
import { mediaKey, type MediaRef } from "./media_ref.ts";
import type { MediaSettings } from "./media_settings.ts";
import type { MediaStore } from "./media_store.ts";
import {
  type FetchedMedia,
  type MediaFetch,
  mediaLabel,
  type PlatformMedia,
} from "./platform_media.ts";
import { downloadTimedOut, overLimit } from "./download_media.ts";
import { deadlineSignal } from "../runtime/deadline.ts";
import { IMAGE_TYPES, SIGNED_TYPES, sniffMediaType } from "./sniff_media_type.ts";

/** What reading a message's platform media needs. */
export interface ResolveOptions {
  /** The fetch of the adapter that announced an item (`PlatformAdapter.fetchMedia`), if it has one. */
  fetchFor(platform: string): MediaFetch | undefined;
  /** The `MEDIA` store; absent: no medium can be kept, so none is read. */
  store?: MediaStore;
  settings: MediaSettings;
  /** The session key: stored media are keyed under it (`mediaKey`). */
  scope: string;
  /** The turn's signal: its timeout and /stop end every download. */
  signal: AbortSignal;
}

/** A message's platform media once read. */
export interface ResolvedMedia {
  /**
   * References to the media stored: images (shown to the model), and voice notes, recordings and
   * documents of a type read as text (made text once by the turn: lib/media/describe_media.ts).
   */
  media: MediaRef[];
  /** Marks of the media not read, for the user's message: "[photo: not read — download failed]". */
  marks: string[];
  /** What could not be read, for the user: "the photo (download failed: …)". */
  problems: string[];
}

/** Kinds whose declared type says enough to refuse them before any byte is fetched. */
const _HEARD = new Set(["voice", "audio", "video_note"]);
/**
 * Kinds recorded in the app, whose file name is the app's own ("audio_message.m4a"): kept without
 * it, so the transcript is labelled a voice message, not an audio file of that name.
 */
const _RECORDED = new Set(["voice", "video_note"]);

/**
 * Reads each of `media` once, in order: fetched by its adapter within `MEDIA_MAX_BYTES` (a stated
 * size over it is not fetched) and `MEDIA_DOWNLOAD_TIMEOUT_MS`, typed by its bytes (a type stated
 * but not borne out by them is corrupt), stored in `MEDIA` and kept as a `MediaRef` —
 * an image, or a medium read as text (`mediaTextRefusal` says which: voice only where a
 * transcription endpoint is set, a PDF only where the deployment gave pdf.js). Whatever cannot be read — no store, a failed or oversize
 * download, a type not read — is named in `problems` and marked in `marks`: never thrown (but the
 * turn's abort), so one bad file never fails a turn.
 */
export async function resolveMedia(
  media: readonly PlatformMedia[],
  options: ResolveOptions,
): Promise<ResolvedMedia> {
  const out: ResolvedMedia = { media: [], marks: [], problems: [] };
  for (const item of media) {
    const read = await _read(item, options);
    options.signal.throwIfAborted();
    if ("ref" in read) {
      out.media.push(read.ref);
      continue;
    }
    out.problems.push(`${mediaLabel(item)} (${read.why})`);
    out.marks.push(`[${mediaLabel(item).replace(/^the /, "")}: not read — ${read.why}]`);
  }
  return out;
}

/**
 * The one notice a user gets for what could not be read: "I couldn't read the photo (download
 * failed: …)." — null when everything was read.
 */
export function unreadNotice(problems: readonly string[]): string | null {
  if (!problems.length) return null;
  const list = problems.length === 1
    ? problems[0]
    : `${problems.slice(0, -1).join(", ")} and ${problems.at(-1)}`;
  return `I couldn't read ${list}.`;
}

type _Read = { ref: MediaRef } | { why: string };

async function _read(item: PlatformMedia, options: ResolveOptions): Promise<_Read> {
  const { settings } = options;
  const reading = mediaReading(settings);
  if (item.kind === "animated_sticker") return { why: "animated stickers are not read" };
  if (item.kind === "video") return { why: "videos are not read" };
  // A voice note refused by its declared type costs no download.
  const heard = _HEARD.has(item.kind)
    ? mediaTextRefusal(
      item.type ?? (item.kind === "video_note" ? "video/mp4" : "audio/ogg"),
      reading,
    )
    : null;
  if (heard) return { why: heard };
  if (!options.store) return { why: "media storage (MEDIA) is not set up on this deployment" };
  if (item.size !== undefined && item.size > settings.maxBytes) {
    return { why: overLimit(settings.maxBytes) };
  }
  const fetch = options.fetchFor(item.platform);
  if (!fetch) return { why: `files from ${item.platform} are not fetched` };
  const got = await _fetchInTime(fetch, item, options);
  if (!got.ok) return { why: got.why };
  const type = sniffMediaType(got.bytes);
  if (type && IMAGE_TYPES.has(type)) {
    if (settings.vision === "off") return { why: "images are not read on this deployment" };
  } else if (item.kind === "photo" || item.kind === "sticker") {
    return { why: `it is not an image (${type ?? "unknown type"})` };
  } else if (!type && item.type && SIGNED_TYPES.has(item.type)) {
    // Stated as a type its bytes would show (a PDF starts "%PDF-"), and they do not: corrupt.
    return { why: `it is not a valid ${item.type} file` };
  } else {
    // By its bytes, or by the type stated where the bytes name none (a Markdown or CSV file is
    // text/plain by its bytes).
    const refused = mediaTextRefusal(type ?? item.type ?? "", reading);
    if (refused) return { why: refused };
  }
  const stored = type ?? item.type ?? "application/octet-stream";
  const id = await mediaKey(options.scope, got.bytes);
  try {
    // Kept already under this very key (a mail's staged attachment): one write, not two.
    if (got.stored !== id) await options.store.put(id, got.bytes, stored);
  } catch {
    return { why: "it could not be stored" };
  }
  const name = item.name && !_RECORDED.has(item.kind) ? { name: item.name.slice(0, 256) } : {};
  return { ref: { id, type: stored, size: got.bytes.length, ...name } };
}

/**
 * The adapter's fetch of `item` within `MEDIA_DOWNLOAD_TIMEOUT_MS` for all its requests (a look-up,
 * a token, the download): a server that holds the download is given up and worded so, while the
 * turn's own stop (its timeout, /stop) is thrown as it is.
 */
async function _fetchInTime(
  fetch: MediaFetch,
  item: PlatformMedia,
  options: ResolveOptions,
): Promise<FetchedMedia> {
  const { downloadTimeoutMs, maxBytes } = options.settings;
  // Cleared when the fetch ends: a busy session object may only have so many active timers.
  const deadline = deadlineSignal(downloadTimeoutMs, options.signal);
  const { signal } = deadline;
  try {
    const got = await fetch(item, { signal, maxBytes });
    return !got.ok && deadline.expired && !options.signal.aborted
      ? { ok: false, why: downloadTimedOut(downloadTimeoutMs) }
      : got;
  } catch (error) {
    if (options.signal.aborted || !deadline.expired) throw error;
    return { ok: false, why: downloadTimedOut(downloadTimeoutMs) };
  } finally {
    deadline.clear();
  }
}

// A medium a chat platform announced (its file id, kind, and the name, type and size it stated), not yet downloaded; runtime-neutral.
/**
 * What a medium is as the platform calls it: a photo or sticker (an image), a document (any file),
 * a voice note, an audio track, a video or video note, or an animated sticker.
 */
export type PlatformMediaKind =
  | "photo"
  | "sticker"
  | "document"
  | "voice"
  | "audio"
  | "video"
  | "video_note"
  | "animated_sticker";

/**
 * A medium as a platform adapter parsed it from a delivery: never downloaded at parse time (the
 * acknowledgement does not wait), fetched inside the turn by the adapter's `fetchMedia` and then
 * replaced in the transcript by a `MediaRef`. `name`, `type` and `size` are what the platform
 * stated: the size is checked before a download, the type is decided by the bytes.
 */
export interface PlatformMedia {
  /** The adapter that can fetch it (`PlatformAdapter.name`). */
  platform: string;
  /** The platform's handle on the file (Telegram's `file_id`, the generic webhook's URL). */
  file: string;
  kind: PlatformMediaKind;
  name?: string;
  type?: string;
  size?: number;
  /** A voice note's or audio's length in seconds, as stated. */
  seconds?: number;
}

/** The words a medium is named by in a notice: "the photo", "the document report.pdf". */
export function mediaLabel(item: PlatformMedia): string {
  const noun = _NOUNS[item.kind];
  return item.name && (item.kind === "document" || item.kind === "audio")
    ? `the ${noun} ${item.name}`
    : `the ${noun}`;
}

const _NOUNS: Record<PlatformMediaKind, string> = {
  photo: "photo",
  sticker: "sticker",
  document: "document",
  voice: "voice note",
  audio: "audio file",
  video: "video",
  video_note: "video note",
  animated_sticker: "animated sticker",
};

/**
 * What fetching a platform's medium came to: its bytes, or why not (said to the user). `stored`:
 * the key the bytes are in MEDIA under already (a mail's attachment, kept when the mail came in),
 * so the turn does not write them again when that is the key it would use.
 */
export type FetchedMedia =
  | { ok: true; bytes: Uint8Array; stored?: string }
  | { ok: false; why: string };

/**
 * Fetches a platform's medium inside the turn, within `maxBytes` (`MEDIA_MAX_BYTES`), stopped by
 * `signal` (the turn's: its timeout, /stop). Never throws for a failed download (answered as
 * `{ ok: false, why }`, naming no URL or token); a stopped turn's abort is thrown as it is.
 */
export type MediaFetch = (
  item: PlatformMedia,
  options: { signal: AbortSignal; maxBytes: number },
) => Promise<FetchedMedia>;

// A mail's attachments through the media path: their bytes kept in MEDIA before the mail is taken (a mail cannot be fetched again), announced as platform media the turn reads; runtime-neutral.
import {
  type FetchedMedia,
  mediaKey,
  type MediaSettings,
  type MediaStore,
  overLimit,
  type PlatformMedia,
  type PlatformMediaKind,
  sniffMediaType,
} from "../media/mod.ts";

/** At most this many of a mail's attachments are read; the rest are named as not read. */
export const MAX_MAIL_ATTACHMENTS = 10;

/** One attachment as the mail carried it (inline `cid:` images included), decoded. */
export interface MailAttachment {
  /** The file name it was sent with, if any. */
  name?: string;
  /** The MIME type the sender declared (the bytes decide what it is read as). */
  type: string;
  bytes: Uint8Array;
}

// The handle of an attachment past MAX_MAIL_ATTACHMENTS: announced (so it is named), never kept.
const _NOT_KEPT = "";

/**
 * `attachments` as the platform media of their mail's message. Unlike a chat platform's files, a
 * mail's bytes exist only while the mail is handled, so each attachment the turn may read is put
 * into `store` under its session-scoped key (`mediaKey(scope, …)`, the key the turn would store
 * it under, typed as the turn types it; the turn, told so by `stored`, does not write it again)
 * before the message is; its `file` is that key, which
 * `fetchStagedAttachment` reads back inside the turn. What the turn refuses before fetching — no
 * store, over `MEDIA_MAX_BYTES`, a video, audio without a transcription endpoint — and what is
 * past `MAX_MAIL_ATTACHMENTS` is announced but not stored: the turn names it in its one notice
 * (lib/deployment/media_turns.ts), as for any platform.
 */
export async function stageMailAttachments(
  attachments: readonly MailAttachment[],
  options: { store?: MediaStore; settings: MediaSettings; scope: string },
): Promise<PlatformMedia[]> {
  const { store, settings, scope } = options;
  return await Promise.all(attachments.map(async (a, i): Promise<PlatformMedia> => {
    const kind = _kind(a.type);
    const item: PlatformMedia = {
      platform: "email",
      file: _NOT_KEPT,
      kind,
      ...(a.name ? { name: a.name.slice(0, 256) } : {}),
      // An audio's declared type is left out: the turn would refuse a type it does not list
      // before reading the bytes, which say better what the recording is.
      ...(kind === "document" && a.type ? { type: a.type } : {}),
      size: a.bytes.byteLength,
    };
    const refusedUnread = !store || a.bytes.byteLength > settings.maxBytes || kind === "video" ||
      (kind === "audio" && settings.transcribe === null);
    if (i >= MAX_MAIL_ATTACHMENTS || refusedUnread) return item;
    const file = await mediaKey(scope, a.bytes);
    // Typed as the turn would type it (lib/media/resolve_media.ts), which then writes it no more.
    await store.put(
      file,
      a.bytes,
      sniffMediaType(a.bytes) ?? item.type ?? "application/octet-stream",
    );
    return { ...item, file };
  }));
}

/**
 * Reads back an attachment `stageMailAttachments` kept (the email adapter's `fetchMedia`): its
 * bytes within `maxBytes`, or why not — past the count cap, no store, gone. Never throws.
 */
export async function fetchStagedAttachment(
  item: PlatformMedia,
  store: MediaStore | undefined,
  maxBytes: number,
): Promise<FetchedMedia> {
  if (item.file === _NOT_KEPT) {
    return { ok: false, why: `a mail's first ${MAX_MAIL_ATTACHMENTS} attachments are read` };
  }
  if (!store) return { ok: false, why: "media storage (MEDIA) is not set up on this deployment" };
  let bytes: Uint8Array | null;
  try {
    bytes = await store.get(item.file);
  } catch {
    return { ok: false, why: "it could not be read back from the media store" };
  }
  if (!bytes) return { ok: false, why: "it is no longer stored" };
  if (bytes.byteLength > maxBytes) return { ok: false, why: overLimit(maxBytes) };
  return { ok: true, bytes, stored: item.file };
}

/** The kind a declared type names: audio, video, else a document (an image is one by its bytes). */
function _kind(type: string): PlatformMediaKind {
  const top = type.split("/", 1)[0].toLowerCase();
  return top === "audio" ? "audio" : top === "video" ? "video" : "document";
}

// A reply part that is a file: its bytes read from MEDIA and sent as the platform's own media (none read where it goes by link), or a link or a note where the adapter has none; runtime-neutral.
import type { MediaRef, MediaStore } from "../media/mod.ts";
import type {
  PartSend,
  PlatformAdapter,
  PlatformEnv,
  ReplyTarget,
  SendResult,
} from "./platform.ts";

/** Where a file part's bytes and link come from (the deployment's `MEDIA`, `PUBLIC_URL`, `MEDIA_URL_SECRET`). */
export interface FileSources {
  /** The `MEDIA` store; absent: every file part is sent as a note. */
  store?: MediaStore;
  /** A signed, expiring link to the file (`GET /media/{id}`), or null where none can be made. */
  link?: (file: MediaRef) => Promise<string | null>;
}

/** A file named for people: its name, type and size (`📎 chart.png (image/png, 4.1 KB)`). */
export function fileLabel(file: MediaRef): string {
  return `📎 ${file.name ?? "file"} (${file.type}, ${_size(file.size)})`;
}

/**
 * The text a file stands as where the platform gets no file: its name, type and size, then the
 * link to it where there is one, else why it is not shown.
 */
export function fileNote(file: MediaRef, link: string | null, why?: string): string {
  const what = fileLabel(file);
  if (link) return `${what}: ${link}`;
  return `${what} — ${why ?? "files cannot be shown here"}`;
}

/**
 * Sends `part.file` to a checked target through `adapter`: its bytes (read from the store each
 * attempt; none for an adapter that sends by link, `filesByLink`, which only has the file's
 * presence checked) to `sendFile` with `caption`; without `sendFile`, `send` with the file's link or note
 * before the caption. A file no longer in the store is sent as a note saying so, never a failure
 * that would stop the text parts after it. A store that cannot be read now is a retryable failure
 * before anything left (no `leaving`): the sender waits and tries again.
 */
export async function sendFilePart<T extends ReplyTarget>(
  adapter: PlatformAdapter<T>,
  target: T,
  caption: string,
  part: PartSend & { file: MediaRef },
  env: PlatformEnv,
  sources: FileSources,
): Promise<SendResult> {
  const { file } = part;
  const withCaption = (text: string) => caption ? `${text}\n\n${caption}` : text;
  let link: string | null = null;
  try {
    link = await sources.link?.(file) ?? null;
  } catch {
    link = null; // a link is a convenience: the note still names the file
  }
  if (!adapter.sendFile || !sources.store) {
    return await adapter.send(target, withCaption(fileNote(file, link)), part, env);
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await _bytesToSend(adapter, sources.store, file.id);
  } catch {
    return { ok: false, status: 0, retryable: true, message: "the media store could not be read" };
  }
  if (!bytes) {
    const note = fileNote(file, null, "it is no longer stored");
    return await adapter.send(target, withCaption(note), part, env);
  }
  return await adapter.sendFile(target, { ...file, bytes, url: link }, caption, part, env);
}

/** What `adapter.sendFile` gets of the bytes: none for one sending by link (only their presence checked), else them all; null when gone. */
async function _bytesToSend(
  adapter: { filesByLink?: true },
  store: MediaStore,
  id: string,
): Promise<Uint8Array | null> {
  if (!adapter.filesByLink || !store.has) return await store.get(id);
  return await store.has(id) ? _NO_BYTES : null;
}

/** The bytes an adapter that sends by link is handed (it never reads them). */
const _NO_BYTES = new Uint8Array(0);

function _size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

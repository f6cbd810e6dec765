// What the transcript keeps of a medium (a reference, never the bytes), an image part before it is stored, and the key bytes are stored under; runtime-neutral.
import { encodeHex } from "../runtime/mod.ts";

/**
 * A stored medium as the transcript keeps it: its key in the `MEDIA` store (`id`), its MIME type
 * as its bytes say (`sniffMediaType`), its size in bytes, and the name and description it came
 * with. The bytes stay in the store.
 */
export interface MediaRef {
  id: string;
  type: string;
  size: number;
  name?: string;
  /** Text that stands for the medium where it is not shown to the model. */
  description?: string;
}

/**
 * An image a request linked by an https URL: kept as the link and fetched (`fetchOut`, within
 * `MEDIA_MAX_BYTES`) in each turn that shows it to the model; never stored.
 */
export interface MediaLink {
  url: string;
  name?: string;
}

/** A medium of a message: stored (`MediaRef`) or linked (`MediaLink`). */
export type MediaItem = MediaRef | MediaLink;

/** Whether `item` is a stored medium (it has an `id`). */
export function isMediaRef(item: MediaItem): item is MediaRef {
  return "id" in item;
}

/**
 * A media part as a request carried it, before it is checked and stored: where it was (as the
 * error names it, e.g. `messages[0].content[1]`), its URL (a `data:` or https URL), its name,
 * and its kind: absent for an image, `audio` (Chat Completions `input_audio`) or `file`
 * (Responses `input_file`, Chat Completions `file`), which are read as text (lib/media/derive_text.ts).
 */
export interface MediaPart {
  path: string;
  url: string;
  name?: string;
  kind?: "audio" | "file";
}

/**
 * The key of `bytes` in the store: `<hash of scope>/<hash of bytes>`, `scope` being the session
 * key. Session-scoped, so a session's media share one prefix; named by content, so a client that
 * sends its whole history again (as Chat Completions clients do) stores each image once.
 */
export async function mediaKey(scope: string, bytes: Uint8Array): Promise<string> {
  return `${await mediaPrefix(scope)}${(await _sha256Hex(bytes)).slice(0, 40)}`;
}

/**
 * The prefix every key of session `scope` starts with (`<hash of scope>/`, slash included): what
 * an erasure lists and deletes, and what an R2 lifecycle rule may name.
 */
export async function mediaPrefix(scope: string): Promise<string> {
  return `${(await _sha256Hex(new TextEncoder().encode(scope))).slice(0, 24)}/`;
}

async function _sha256Hex(data: Uint8Array): Promise<string> {
  return encodeHex(new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource)));
}

// Reads an image for a turn: a stored one from the media store, a linked one over https (bounded, size-capped, typed by its bytes); runtime-neutral.
import { errorText, fetchOut, HTTP_OUT_TIMEOUT_MS } from "../runtime/mod.ts";
import type { FetchFn } from "../runtime/http_out.ts";
import { isMediaRef, type MediaItem } from "./media_ref.ts";
import type { MediaStore } from "./media_store.ts";
import { readCapped } from "./download_media.ts";
import { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";

/** What reading an image needs. */
export interface ImageReadOptions {
  /** The `MEDIA` store; absent: stored images cannot be read (the binding was removed). */
  store?: MediaStore;
  /** `MEDIA_MAX_BYTES`: a linked image longer than this is not read. */
  maxBytes: number;
  /** The turn's signal: a stopped turn stops its downloads. */
  signal?: AbortSignal;
  /** The fetch for linked images (tests); the global one by default. */
  fetch?: FetchFn;
}

/** An image's bytes and type, or why it could not be read (said to the model, never an error). */
export type ImageRead =
  | { ok: true; type: string; bytes: Uint8Array }
  | { ok: false; why: string };

/**
 * Reads `item`: a stored image from the store, a linked one with `fetchOut` (its deadline, at most
 * `maxBytes`, an image by its bytes). Whatever fails is answered as `{ ok: false, why }`: an image
 * that cannot be read must never fail the turn, or every later turn of its conversation.
 */
export async function readImage(item: MediaItem, options: ImageReadOptions): Promise<ImageRead> {
  try {
    return isMediaRef(item) ? await _stored(item.id, options) : await _linked(item.url, options);
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return { ok: false, why: `it could not be read (${errorText(error).slice(0, 200)})` };
  }
}

async function _stored(id: string, options: ImageReadOptions): Promise<ImageRead> {
  if (!options.store) return { ok: false, why: "media storage is not configured" };
  let bytes: Uint8Array | null;
  try {
    bytes = await options.store.get(id);
  } catch {
    return { ok: false, why: "the media store could not be read" };
  }
  if (!bytes) return { ok: false, why: "it is no longer stored" };
  return _typed(bytes);
}

async function _linked(url: string, options: ImageReadOptions): Promise<ImageRead> {
  const res = await fetchOut(url, { signal: options.signal }, {
    api: "image's server",
    timeoutMs: HTTP_OUT_TIMEOUT_MS,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (!res.ok) {
    await res.body?.cancel();
    return { ok: false, why: `its server answered ${res.status}` };
  }
  const bytes = await readCapped(res, options.maxBytes);
  if (!bytes) return { ok: false, why: `it is over MEDIA_MAX_BYTES (${options.maxBytes})` };
  return _typed(bytes);
}

function _typed(bytes: Uint8Array): ImageRead {
  const type = sniffMediaType(bytes);
  if (!type || !IMAGE_TYPES.has(type)) {
    return { ok: false, why: `it is not an image (${type ?? "unknown type"})` };
  }
  return { ok: true, type, bytes };
}

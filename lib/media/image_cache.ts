// A session object's stored images kept model-ready in memory (data URLs by media id, bounded, least recently used out first), and the store wrapper that drops one when MEDIA changes it; runtime-neutral.
import type { MediaStore } from "./media_store.ts";

/**
 * How many characters of data URLs one cache holds (≈ 6 MB of image bytes once base64): the
 * default `MEDIA_IMAGES_IN_CONTEXT` (4) phone photos many times over, yet small beside a
 * Worker isolate's 128 MB, which the session objects it hosts share.
 */
export const IMAGE_CACHE_MAX_CHARS = 8_000_000;

/**
 * Stored images as the model is sent them (`data:<type>;base64,…`), by media id, for the life of
 * one session object: a turn's view takes them from here instead of reading MEDIA and encoding
 * again, so an image in context costs one read per object, not one per turn. Memory, not state:
 * an image evicted (the cap, the object leaving memory) is read again when next shown, so no
 * promise depends on it. Media ids are content-addressed (`mediaKey`), so an id's bytes never
 * change under it; a delete or overwrite through `evictingMediaStore` drops the entry, so an
 * image past `MEDIA_RETENTION_DAYS` is not shown from here after MEDIA lost it.
 */
export class ImageCache {
  readonly #urls = new Map<string, string>();
  #chars = 0;

  /** A cache of at most `maxChars` characters of data URLs (a larger one is not kept). */
  constructor(readonly maxChars: number = IMAGE_CACHE_MAX_CHARS) {}

  /** The data URL kept for media `id`, now the most recently used; undefined when none is. */
  get(id: string): string | undefined {
    const url = this.#urls.get(id);
    if (url === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting makes it the newest.
    this.#urls.delete(id);
    this.#urls.set(id, url);
    return url;
  }

  /** Keeps `url` for `id`, dropping the least recently used until the whole fits the cap. */
  set(id: string, url: string): void {
    this.delete(id);
    if (url.length > this.maxChars) return;
    this.#urls.set(id, url);
    this.#chars += url.length;
    for (const [oldest, old] of this.#urls) {
      if (this.#chars <= this.maxChars) break;
      this.#urls.delete(oldest);
      this.#chars -= old.length;
    }
  }

  /** Drops `id`'s data URL, if kept. */
  delete(id: string): void {
    const url = this.#urls.get(id);
    if (url === undefined) return;
    this.#urls.delete(id);
    this.#chars -= url.length;
  }

  /** Characters of data URLs kept now. */
  get chars(): number {
    return this.#chars;
  }
}

/**
 * `store`, dropping a key's entry from `cache` when it is deleted (the retention sweep) or put
 * again, so the cache never shows what MEDIA no longer holds.
 */
export function evictingMediaStore(store: MediaStore, cache: ImageCache): MediaStore {
  return {
    get: (key) => store.get(key),
    ...(store.list ? { list: store.list.bind(store) } : {}),
    ...(store.has ? { has: store.has.bind(store) } : {}),
    async put(key, bytes, type) {
      cache.delete(key);
      await store.put(key, bytes, type);
    },
    async delete(key) {
      cache.delete(key);
      await store.delete(key);
    },
  };
}

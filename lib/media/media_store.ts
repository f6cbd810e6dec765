// Where media bytes live (R2 in a Worker, memory in tests): put, get, delete and list by key; runtime-neutral.

/**
 * A store of media bytes by key. The Worker's is the `MEDIA` R2 bucket (functions/r2_media_store.ts);
 * `memoryMediaStore` is the tests'. Bytes never go into a session's SQLite: its rows are capped
 * (2 MB on Durable Objects), and the transcript keeps only a reference (`MediaRef`).
 */
export interface MediaStore {
  /** Stores `bytes` of MIME type `type` under `key` (an existing key is overwritten). */
  put(key: string, bytes: Uint8Array, type: string): Promise<void>;
  /** The bytes under `key`, or null when there are none (never stored, deleted, expired). */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes `key`; removing what is not there is no error. */
  delete(key: string): Promise<void>;
  /**
   * Whether `key` is stored, without reading its bytes (R2's `head`). Optional: without it, a
   * caller that only needs to know reads the bytes with `get`.
   */
  has?(key: string): Promise<boolean>;
  /**
   * Every key that starts with `prefix` (a session's media: `mediaPrefix`), for erasure. Optional:
   * a store without it cannot erase a session's media by prefix (retention still deletes by key).
   */
  list?(prefix: string): Promise<string[]>;
}

/** A `MediaStore` in memory, for tests; `failing` makes every `get` reject, as a broken bucket would. */
export function memoryMediaStore(): MediaStore & {
  readonly objects: Map<string, { bytes: Uint8Array; type: string }>;
  failing: boolean;
} {
  const objects = new Map<string, { bytes: Uint8Array; type: string }>();
  return {
    objects,
    failing: false,
    put(key, bytes, type) {
      objects.set(key, { bytes: bytes.slice(), type });
      return Promise.resolve();
    },
    get(key) {
      if (this.failing) return Promise.reject(new Error("the media store is unavailable"));
      return Promise.resolve(objects.get(key)?.bytes.slice() ?? null);
    },
    delete(key) {
      objects.delete(key);
      return Promise.resolve();
    },
    has(key) {
      if (this.failing) return Promise.reject(new Error("the media store is unavailable"));
      return Promise.resolve(objects.has(key));
    },
    list(prefix) {
      return Promise.resolve([...objects.keys()].filter((key) => key.startsWith(prefix)));
    },
  };
}

/**
 * `store`, telling `stored` the key of each medium put into it once the put succeeded (the
 * session's retention ledger: lib/session/media_retention.ts).
 */
export function notingMediaStore(store: MediaStore, stored: (key: string) => void): MediaStore {
  return {
    get: (key) => store.get(key),
    delete: (key) => store.delete(key),
    ...(store.list ? { list: store.list.bind(store) } : {}),
    ...(store.has ? { has: store.has.bind(store) } : {}),
    async put(key, bytes, type) {
      await store.put(key, bytes, type);
      stored(key);
    },
  };
}

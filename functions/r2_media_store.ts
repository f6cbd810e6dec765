// The MediaStore of a Worker: the `MEDIA` R2 bucket; Workers (R2 binding).
import type { MediaStore } from "../lib/media/mod.ts";

/**
 * `bucket` as a `MediaStore` (lib/media/media_store.ts): each medium one object under its
 * session-scoped key, its MIME type as the object's content type.
 */
export function r2MediaStore(bucket: R2Bucket): MediaStore {
  return {
    async put(key, bytes, type) {
      await bucket.put(key, bytes, { httpMetadata: { contentType: type } });
    },
    async get(key) {
      const object = await bucket.get(key);
      return object ? new Uint8Array(await object.arrayBuffer()) : null;
    },
    async delete(key) {
      await bucket.delete(key);
    },
    // The object's metadata only: a file sent by its link needs to exist, not its bytes read.
    async has(key) {
      return (await bucket.head(key)) !== null;
    },
    async list(prefix) {
      const keys: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
        keys.push(...page.objects.map((object) => object.key));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return keys;
    },
  };
}

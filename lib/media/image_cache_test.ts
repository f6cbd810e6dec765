// Unit tests of ImageCache and evictingMediaStore: bounded, least recently used out first, and an image deleted from MEDIA no longer shown from memory; runs under Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { evictingMediaStore, ImageCache } from "./image_cache.ts";
import { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import { mediaModelView } from "./model_view.ts";

const GIF = Uint8Array.from(
  atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
  (c) => c.charCodeAt(0),
);

Deno.test("ImageCache keeps at most maxChars, dropping the least recently used first", () => {
  const cache = new ImageCache(10);
  cache.set("a", "aaaa");
  cache.set("b", "bbbb");
  assertStrictEquals(cache.get("a"), "aaaa"); // "a" is now the newest
  cache.set("c", "cccc");
  assertStrictEquals(cache.get("b"), undefined);
  assertStrictEquals(cache.get("a"), "aaaa");
  assertStrictEquals(cache.chars, 8);
  cache.set("big", "x".repeat(11));
  assertStrictEquals(cache.get("big"), undefined, "larger than the cap: not kept");
  assertStrictEquals(cache.chars, 8);
  cache.set("a", "aa");
  assertStrictEquals(cache.chars, 6, "an id set again counts once");
  cache.delete("a");
  cache.delete("nothing");
  assertStrictEquals(cache.chars, 4);
});

Deno.test("evictingMediaStore() drops a deleted image from the cache: the next view says it is no longer stored", async () => {
  const inner = memoryMediaStore();
  const cache = new ImageCache();
  const store = evictingMediaStore(inner, cache);
  await store.put("k/1", GIF, "image/gif");
  const ref = { id: "k/1", type: "image/gif", size: GIF.length, name: "p.gif" };
  const messages = [{ role: "user", content: "look", media: [ref] } as ChatMessage];
  const view = () => mediaModelView({ store, cache, settings: DEFAULT_MEDIA_SETTINGS })(messages);
  const shown = await view();
  assertEquals(Array.isArray(shown[0].content) && shown[0].content.length, 2);
  assertStrictEquals(cache.chars > 0, true);
  // The retention sweep deletes it through the object's store.
  await store.delete("k/1");
  const after = await view();
  assertStrictEquals(
    after[0].content,
    `look\n[image: p.gif, ${GIF.length} B] (the image could not be shown: it is no longer stored)`,
  );
});

Deno.test("mediaModelView() with a cache checks a kept image is still stored: one deleted behind the object's back is not shown", async () => {
  const store = memoryMediaStore();
  const cache = new ImageCache();
  await store.put("k/2", GIF, "image/gif");
  const ref = { id: "k/2", type: "image/gif", size: GIF.length, name: "q.gif" };
  const messages = [{ role: "user", content: "look", media: [ref] } as ChatMessage];
  const view = () => mediaModelView({ store, cache, settings: DEFAULT_MEDIA_SETTINGS })(messages);
  await view();
  assertStrictEquals(cache.chars > 0, true);
  store.objects.delete("k/2"); // an R2 lifecycle rule, not this object's store
  const after = await view();
  assertStrictEquals(
    after[0].content,
    `look\n[image: q.gif, ${GIF.length} B] (the image could not be shown: it is no longer stored)`,
  );
  assertStrictEquals(cache.chars, 0, "dropped from the cache once found gone");
});

// Unit tests of eraseSessionMedia (lib/media/erase_media.ts) over a memory media store; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { eraseSessionMedia } from "./erase_media.ts";
import { mediaKey, mediaPrefix } from "./media_ref.ts";
import { memoryMediaStore } from "./media_store.ts";

Deno.test("eraseSessionMedia() deletes every medium under the session's prefix and no other session's", async () => {
  const store = memoryMediaStore();
  const bytes = (n: number) => new Uint8Array([n, n, n]);
  const mine = [await mediaKey("api:a", bytes(1)), await mediaKey("api:a", bytes(2))];
  const theirs = await mediaKey("api:b", bytes(1));
  for (const key of [...mine, theirs]) await store.put(key, bytes(0), "image/png");
  assertStrictEquals(mine[0].startsWith(await mediaPrefix("api:a")), true);

  assertStrictEquals(await eraseSessionMedia(store, "api:a"), 2);
  assertEquals([...store.objects.keys()], [theirs]);
  assertStrictEquals(await eraseSessionMedia(store, "api:a"), 0, "safe to repeat");
});

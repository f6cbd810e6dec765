// Unit tests of prepareImage, storePreparedImage and prepareRequestImages: refusals naming the part and the limit, bytes stored once under a session-scoped key; runs under Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { encodeBase64 } from "../runtime/mod.ts";
import type { ChatMessage } from "../agent/mod.ts";
import { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import { isMediaRef, mediaKey, type MediaPart } from "./media_ref.ts";
import { messageMedia } from "./message_media.ts";
import { MediaRefusal, prepareImage, storePreparedImage } from "./prepare_image.ts";
import { prepareRequestImages } from "./request_images.ts";

const GIF = Uint8Array.from(
  atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
  (c) => c.charCodeAt(0),
);
const checks = { stored: true, settings: { ...DEFAULT_MEDIA_SETTINGS, maxBytes: 100 } };
const part = (url: string): MediaPart => ({ path: "messages[0].content[1]", url });
const data = (type: string, bytes: Uint8Array) => `data:${type};base64,${encodeBase64(bytes)}`;

function refusal(fn: () => unknown): string {
  const error = assertThrows(fn);
  assert(error instanceof MediaRefusal, String(error));
  return error.message;
}

Deno.test("prepareImage() types a data URL by its bytes, not its declared type", () => {
  const image = prepareImage(part(data("image/png", GIF)), checks);
  assert("bytes" in image);
  assertStrictEquals(image.type, "image/gif");
  assertEquals(image.bytes, GIF);
});

Deno.test("prepareImage() refuses, naming the part and the limit", () => {
  const big = new Uint8Array(101);
  big.set(GIF);
  assertStrictEquals(
    refusal(() => prepareImage(part(data("image/gif", big)), checks)),
    "messages[0].content[1]: the image is 101 bytes, over MEDIA_MAX_BYTES (100)",
  );
  // Far over: refused before it is decoded.
  assert(
    refusal(() => prepareImage(part(data("image/gif", new Uint8Array(1000))), checks))
      .includes("over MEDIA_MAX_BYTES (100)"),
  );
  assertStrictEquals(
    refusal(() => prepareImage(part(data("image/png", new TextEncoder().encode("hi"))), checks)),
    "messages[0].content[1]: not an image by its content (text/plain); PNG, JPEG, GIF and WebP are read",
  );
  assert(refusal(() => prepareImage(part("data:image/png,abc"), checks)).includes("base64"));
  assert(
    refusal(() => prepareImage(part("data:image/png;base64,@@@@"), checks)).includes("base64"),
  );
  for (const url of ["http://example.com/a.png", "file:///etc/passwd", "", "nonsense"]) {
    assert(refusal(() => prepareImage(part(url), checks)).includes("data: URL or an https URL"));
  }
});

Deno.test("prepareImage() refuses every image without a store or with VISION=off", () => {
  const off = "messages[0].content[1]: images are off on this deployment";
  const url = data("image/gif", GIF);
  assertStrictEquals(refusal(() => prepareImage(part(url), { ...checks, stored: false })), off);
  const vision = { ...checks, settings: { ...checks.settings, vision: "off" as const } };
  assertStrictEquals(refusal(() => prepareImage(part("https://x.test/a.png"), vision)), off);
});

Deno.test("prepareImage() keeps an https URL as a link to fetch in the turn", () => {
  assertEquals(prepareImage({ ...part("https://x.test/a.png"), name: "a.png" }, checks), {
    url: "https://x.test/a.png",
    name: "a.png",
  });
});

Deno.test("storePreparedImage() stores bytes once under a session-scoped, content-named key", async () => {
  const store = memoryMediaStore();
  const image = prepareImage(part(data("image/gif", GIF)), checks);
  const one = await storePreparedImage(image, store, "api:default:s1");
  const again = await storePreparedImage(image, store, "api:default:s1");
  const other = await storePreparedImage(image, store, "api:default:s2");
  assert(isMediaRef(one) && isMediaRef(other));
  assertEquals(one, again);
  assertEquals(one, {
    id: await mediaKey("api:default:s1", GIF),
    type: "image/gif",
    size: GIF.length,
  });
  assert(one.id.split("/")[0] !== other.id.split("/")[0], "another session, another prefix");
  assertStrictEquals(store.objects.size, 2);
  assertEquals(store.objects.get(one.id), { bytes: GIF, type: "image/gif" });
});

Deno.test("prepareRequestImages() checks every part first, then puts references in place of parts", async () => {
  const url = data("image/gif", GIF);
  const earlier = [
    { role: "user", content: "old", media: [{ path: "messages[0].content[1]", url }] },
    { role: "assistant", content: "ok" },
  ] as ChatMessage[];
  const input = [{ path: "messages[2].content[0]", url: "https://x.test/b.png" }];
  const images = prepareRequestImages(earlier, input, checks);
  assert(images.any);
  const store = memoryMediaStore();
  const stored = await images.store(store, "api:default:s");
  assertEquals(stored.media, [{ url: "https://x.test/b.png" }]);
  const seed = stored.inMessages(earlier);
  const [ref] = messageMedia<{ id: string }>(seed[0]);
  assert(store.objects.has(ref.id));
  assert(!JSON.stringify(seed).includes(encodeBase64(GIF)), "no bytes left in the seed");
  assertStrictEquals(seed[1], earlier[1]);
  // One bad part refuses the request before anything is stored.
  const bad = [{ path: "messages[2].content[1]", url: "http://x.test/c.png" }];
  const none = memoryMediaStore();
  assert(
    refusal(() => prepareRequestImages(earlier, bad, checks)).startsWith("messages[2].content[1]"),
  );
  assertStrictEquals(none.objects.size, 0);
});

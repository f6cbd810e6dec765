// Unit tests of mediaModelView and readImage: the newest images as parts, older and unreadable ones as text, links fetched within the cap; runs under Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { encodeBase64 } from "../runtime/mod.ts";
import { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import type { MediaItem, MediaRef } from "./media_ref.ts";
import { mediaModelView } from "./model_view.ts";
import { readImage } from "./read_image.ts";

const GIF = Uint8Array.from(
  atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
  (c) => c.charCodeAt(0),
);
const GIF_URL = `data:image/gif;base64,${encodeBase64(GIF)}`;

function stored(n: number): { store: ReturnType<typeof memoryMediaStore>; refs: MediaRef[] } {
  const store = memoryMediaStore();
  const refs = Array.from({ length: n }, (_, i): MediaRef => {
    store.objects.set(`k/${i}`, { bytes: GIF, type: "image/gif" });
    return { id: `k/${i}`, type: "image/gif", size: GIF.length, name: `p${i}.gif` };
  });
  return { store, refs };
}

const user = (content: string, media: MediaItem[]) =>
  ({ role: "user", content, media }) as ChatMessage;
// deno-lint-ignore no-explicit-any
const parts = (m: ChatMessage) => (Array.isArray(m.content) ? m.content as any[] : []);
const images = (ms: ChatMessage[]) =>
  ms.flatMap((m) => parts(m).filter((p) => p.type === "image_url").map((p) => p.image_url.url));
const text = (m: ChatMessage) =>
  typeof m.content === "string" ? m.content : parts(m).map((p) => p.text ?? "").join("");

Deno.test("mediaModelView() sends the newest MEDIA_IMAGES_IN_CONTEXT images as parts, older ones as placeholders", async () => {
  const { store, refs } = stored(3);
  const settings = { ...DEFAULT_MEDIA_SETTINGS, imagesInContext: 2 };
  const view = mediaModelView({ store, settings });
  const sent = await view([
    user("first", [refs[0]]),
    { role: "assistant", content: "ok" },
    user("second", [refs[1], refs[2]]),
  ]);
  assertEquals(images(sent), [GIF_URL, GIF_URL]);
  assertStrictEquals(sent[0].content, `first\n[image: p0.gif, ${GIF.length} B]`);
  assertStrictEquals(text(sent[2]), "second");
  assert(sent.every((m) => !("media" in m)), "the media field never reaches the model");
});

Deno.test("mediaModelView() shows no image with VISION=off, and uses a stored description", async () => {
  const { store, refs } = stored(1);
  const view = mediaModelView({ store, settings: { ...DEFAULT_MEDIA_SETTINGS, vision: "off" } });
  const sent = await view([user("look", [{ ...refs[0], description: "a red dot" }])]);
  assertEquals(images(sent), []);
  assertStrictEquals(sent[0].content, "look\n[image: a red dot]");
});

Deno.test("mediaModelView() turns an image it cannot read into its placeholder and a note, never an error", async () => {
  const { store, refs } = stored(2);
  store.objects.delete("k/0");
  const view = mediaModelView({ store, settings: DEFAULT_MEDIA_SETTINGS });
  const sent = await view([user("a", [refs[0]]), user("b", [refs[1]])]);
  assertStrictEquals(
    sent[0].content,
    `a\n[image: p0.gif, ${GIF.length} B] (the image could not be shown: it is no longer stored)`,
  );
  assertEquals(images(sent), [GIF_URL]);
  store.failing = true;
  const broken = await mediaModelView({ store, settings: DEFAULT_MEDIA_SETTINGS })([
    user("c", [refs[1]]),
  ]);
  assert(
    String(broken[0].content).endsWith(
      "(the image could not be shown: the media store could not be read)",
    ),
  );
  const none = await mediaModelView({ settings: DEFAULT_MEDIA_SETTINGS })([user("d", [refs[1]])]);
  assert(String(none[0].content).endsWith("media storage is not configured)"));
});

Deno.test("mediaModelView() reads each image once per view and leaves messages without media alone", async () => {
  const { store, refs } = stored(1);
  let gets = 0;
  const counting = { ...store, get: (key: string) => (gets++, store.get(key)) };
  const view = mediaModelView({ store: counting, settings: DEFAULT_MEDIA_SETTINGS });
  const messages = [user("x", [refs[0]])];
  await view(messages);
  await view(messages);
  assertStrictEquals(gets, 1);
  const plain: ChatMessage[] = [{ role: "user", content: "plain" }];
  assertStrictEquals(await view(plain), plain);
});

Deno.test("readImage() fetches a link within MEDIA_MAX_BYTES and types it by its bytes", async () => {
  const answer = (body: BodyInit, status = 200, headers: HeadersInit = {}) => () =>
    Promise.resolve(new Response(body, { status, headers }));
  const link = { url: "https://img.test/a" };
  assertEquals(await readImage(link, { maxBytes: 100, fetch: answer(GIF) }), {
    ok: true,
    type: "image/gif",
    bytes: GIF,
  });
  assertEquals(await readImage(link, { maxBytes: 10, fetch: answer(GIF) }), {
    ok: false,
    why: "it is over MEDIA_MAX_BYTES (10)",
  });
  assertEquals(await readImage(link, { maxBytes: 100, fetch: answer("nope", 404) }), {
    ok: false,
    why: "its server answered 404",
  });
  assertEquals(await readImage(link, { maxBytes: 100, fetch: answer("<html>") }), {
    ok: false,
    why: "it is not an image (text/plain)",
  });
  const down = () => Promise.reject(new TypeError("connection refused to https://img.test/a"));
  const failed = await readImage(link, { maxBytes: 100, fetch: down });
  assertEquals(failed, {
    ok: false,
    why: "it could not be read (OutboundError: could not reach the image's server)",
  });
});

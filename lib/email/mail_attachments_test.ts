// Unit tests of a mail's attachments through the media path (stageMailAttachments, fetchStagedAttachment, then the turn's resolveMedia): each kept in MEDIA once; runs under Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { DEFAULT_MEDIA_SETTINGS, memoryMediaStore, resolveMedia } from "../media/mod.ts";
import { fetchStagedAttachment, stageMailAttachments } from "./mail_attachments.ts";

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("stageMailAttachments() then the turn's resolveMedia() put each attachment into MEDIA once", async () => {
  const store = memoryMediaStore();
  const puts: string[] = [];
  const counted = {
    ...store,
    put: (
      key: string,
      bytes: Uint8Array,
      type: string,
    ) => (puts.push(key), store.put(key, bytes, type)),
  };
  const scope = "email:a@example.com";
  const staged = await stageMailAttachments([
    { name: "dot.png", type: "image/png", bytes: PNG },
    { name: "notes.txt", type: "text/plain", bytes: new TextEncoder().encode("hello") },
  ], { store: counted, settings: DEFAULT_MEDIA_SETTINGS, scope });
  assertStrictEquals(puts.length, 2);
  const read = await resolveMedia(staged, {
    fetchFor: () => (item, options) => fetchStagedAttachment(item, counted, options.maxBytes),
    store: counted,
    settings: DEFAULT_MEDIA_SETTINGS,
    scope,
    signal: new AbortController().signal,
  });
  assertEquals(read.problems, []);
  assertEquals(read.media.map((m) => [m.id, m.type]), [
    [staged[0].file, "image/png"],
    [staged[1].file, "text/plain"],
  ]);
  assertStrictEquals(puts.length, 2, "an attachment staged already was written to MEDIA again");
  // Each kept with the type the turn found in its bytes (the staging put them in any order).
  assertEquals(store.objects.get(staged[0].file)?.type, "image/png");
  assertEquals(store.objects.get(staged[1].file)?.type, "text/plain");
});

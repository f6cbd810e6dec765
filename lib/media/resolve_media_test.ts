// Unit tests of resolveMedia: the download deadline (MEDIA_DOWNLOAD_TIMEOUT_MS) apart from the turn's stop, a stated type the bytes do not bear out, a voice note kept without the app's file name; Deno.
import { assertEquals, assertRejects } from "@std/assert";
import { DEFAULT_MEDIA_SETTINGS, type MediaSettings } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import type { MediaFetch, PlatformMedia } from "./platform_media.ts";
import { resolveMedia } from "./resolve_media.ts";

/** A fetch that answers nothing until its signal ends it, as a held download does. */
const heldFetch: MediaFetch = (_item, { signal }) =>
  new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

const _doc: PlatformMedia = { platform: "test", file: "f1", kind: "document", name: "r.pdf" };

function options(fetch: MediaFetch, signal = new AbortController().signal, timeoutMs = 50) {
  return {
    fetchFor: () => fetch,
    store: memoryMediaStore(),
    settings: { ...DEFAULT_MEDIA_SETTINGS, downloadTimeoutMs: timeoutMs } as MediaSettings,
    scope: "test:1",
    signal,
  };
}

Deno.test("resolveMedia() gives up a download held past MEDIA_DOWNLOAD_TIMEOUT_MS and names the setting", async () => {
  const read = await resolveMedia([_doc], options(heldFetch));
  assertEquals(read.media, []);
  assertEquals(read.problems, [
    "the document r.pdf (download failed: no answer within 0.1 s, MEDIA_DOWNLOAD_TIMEOUT_MS)",
  ]);
});

Deno.test("resolveMedia() throws the turn's own stop during a download, not a notice", async () => {
  const turn = new AbortController();
  const read = resolveMedia([_doc], options(heldFetch, turn.signal, 60_000));
  turn.abort(new Error("stopped by /stop"));
  const thrown = await assertRejects(() => read);
  assertEquals((thrown as Error).message, "stopped by /stop");
});

Deno.test("resolveMedia() refuses a file stated as a PDF whose bytes are no PDF (corrupt), before any store", async () => {
  const garbage: MediaFetch = () =>
    Promise.resolve({ ok: true, bytes: Uint8Array.from([0, 255, 19, 7, 200, 1, 2]) });
  const read = await resolveMedia([{ ..._doc, type: "application/pdf" }], options(garbage));
  assertEquals(read.media, []);
  assertEquals(read.problems, ["the document r.pdf (it is not a valid application/pdf file)"]);
});

Deno.test("resolveMedia() keeps a voice note without the app's file name, an audio file with its own", async () => {
  const ogg: MediaFetch = () =>
    Promise.resolve({ ok: true, bytes: Uint8Array.from([79, 103, 103, 83, 0, 2, 0, 0]) });
  const opts = { ...options(ogg) };
  opts.settings = {
    ...opts.settings,
    transcribe: { baseUrl: "http://127.0.0.1:9/v1", model: "m", apiKey: "" },
  };
  const voice: PlatformMedia = {
    platform: "test",
    file: "v1",
    kind: "voice",
    name: "audio_message.ogg",
    type: "audio/ogg",
  };
  const read = await resolveMedia([voice, { ...voice, file: "a1", kind: "audio" }], opts);
  assertEquals(read.media.map((m) => m.name), [undefined, "audio_message.ogg"]);
});

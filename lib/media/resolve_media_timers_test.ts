// Unit test: resolveMedia leaves no download deadline timer active once a download ends (workerd caps an object's active timers); Deno.
import { assertEquals } from "@std/assert";
import { countTimers } from "../runtime/_timer_count_test_support.ts";
import { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import type { MediaFetch, PlatformMedia } from "./platform_media.ts";
import { resolveMedia } from "./resolve_media.ts";

Deno.test("resolveMedia() leaves no timer active once its downloads end", async () => {
  const pdf: MediaFetch = () =>
    Promise.resolve({ ok: true, bytes: new TextEncoder().encode("%PDF-1.7\n%%EOF\n") });
  const item: PlatformMedia = { platform: "test", file: "f1", kind: "document", name: "r.pdf" };
  const timers = countTimers();
  try {
    const read = await resolveMedia([item, { ...item, file: "f2" }], {
      fetchFor: () => pdf,
      store: memoryMediaStore(),
      // A deployment that reads PDFs (one that does not refuses r.pdf before its download).
      settings: {
        ...DEFAULT_MEDIA_SETTINGS,
        downloadTimeoutMs: 60_000,
        pdf: () => import("unpdf/pdfjs"),
      },
      scope: "test:1",
      signal: new AbortController().signal,
    });
    assertEquals(read.problems, []);
    assertEquals(timers.active(), 0, "a download's deadline outlived it");
  } finally {
    timers.restore();
  }
});

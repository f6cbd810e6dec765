// A stored medium's bytes as an HTTP answer (typed by content, sandboxed, never run), shared by the signed link and the console's route; Workers (R2).
import type { Context } from "hono";
import { sniffMediaType } from "../lib/media/mod.ts";
import { type App, jsonError } from "./_http.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/** What a route answers when the medium is no longer stored: its own words and code. */
export interface MediaGone {
  message: string;
  code: string;
}

/**
 * The bytes of medium `id` from `MEDIA` (the caller has checked who may read it and that `MEDIA`
 * is bound): typed by their content, never by a name; 503 with `Retry-After` when the store cannot
 * be read; 404 `gone` when the medium is no longer stored.
 */
export async function mediaResponse(
  c: Context<App>,
  media: R2Bucket,
  id: string,
  gone: MediaGone,
): Promise<Response> {
  let bytes: Uint8Array | null;
  try {
    bytes = await r2MediaStore(media).get(id);
  } catch {
    c.header("retry-after", "5");
    return jsonError(c, 503, "the media store could not be read", "media_unavailable");
  }
  if (!bytes) return jsonError(c, 404, gone.message, gone.code);
  return new Response(new Uint8Array(bytes), {
    headers: {
      "content-type": sniffMediaType(bytes) ?? "application/octet-stream",
      "content-length": String(bytes.length),
      // Named by content: the bytes under an id never change. Private: it came with a key or a
      // signed link.
      "cache-control": "private, max-age=3600",
      // Shown, never run: opened on its own, it gets no script context.
      "content-security-policy": "sandbox; default-src 'none'",
      "x-content-type-options": "nosniff",
    },
  });
}

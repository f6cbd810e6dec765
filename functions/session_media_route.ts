// GET /v1/sessions/{key}/media/{id}: a session's stored image or file for the console, behind the API key (never a key in a URL); Workers (R2).
import type { Context } from "hono";
import { mayAddressSession } from "../lib/api/mod.ts";
import { mediaPrefix, sniffMediaType } from "../lib/media/mod.ts";
import { type App, jsonError, RequestError, sessionKeyParam } from "./_http.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/** A medium's id as the store names it (`mediaKey`): two hex segments. */
const _ID = /^[0-9a-f]{8,64}\/[0-9a-f]{8,64}$/;

/**
 * The bytes of medium `{scope}/{hash}` of session `key`, typed by their content. Scoped like the
 * session itself: another tenant's session is a 404, and so is an id outside the session's own
 * prefix (`mediaPrefix`: a key names the session that stored it), so a key read once never opens
 * another session's media. A medium gone (`MEDIA_RETENTION_DAYS`, erasure) is 404 `media_expired`,
 * which the console shows as the medium's placeholder; no `MEDIA` binding is 404 too.
 */
export async function sessionMediaRoute(c: Context<App>): Promise<Response> {
  const key = sessionKeyParam(c);
  if (!mayAddressSession(c.var.tenant, key)) {
    throw new RequestError(404, "no such session", "not_found");
  }
  const id = `${c.req.param("scope")}/${c.req.param("hash")}`;
  if (!_ID.test(id) || !id.startsWith(await mediaPrefix(key))) {
    throw new RequestError(404, "no such medium in this session", "not_found");
  }
  if (!c.env.MEDIA) return jsonError(c, 404, "no media store (MEDIA) is bound", "not_found");
  let bytes: Uint8Array | null;
  try {
    bytes = await r2MediaStore(c.env.MEDIA).get(id);
  } catch {
    c.header("retry-after", "5");
    return jsonError(c, 503, "the media store could not be read", "media_unavailable");
  }
  if (!bytes) return jsonError(c, 404, "the medium is no longer stored", "media_expired");
  return new Response(new Uint8Array(bytes), {
    headers: {
      "content-type": sniffMediaType(bytes) ?? "application/octet-stream",
      "content-length": String(bytes.length),
      // Named by content: the bytes under an id never change. Private: it came with a key.
      "cache-control": "private, max-age=3600",
      // Shown, never run: opened on its own, it gets no script context.
      "content-security-policy": "sandbox; default-src 'none'",
      "x-content-type-options": "nosniff",
    },
  });
}

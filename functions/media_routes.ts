// GET /media/{id}: a stored file (a tool's, sent by link to a platform or an API client) served to whoever holds its signed, expiring link; Workers (R2).
import { Hono } from "hono";
import { sniffMediaType, verifyMediaUrl } from "../lib/media/mod.ts";
import { type App, jsonError } from "./_http.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/** Routes under /media. */
export const mediaRoutes = new Hono<App>();

/**
 * `GET /media/<scope>/<hash>?exp=…&sig=…`: the file's bytes (typed by their content, never by a
 * name) when `sig` is the HMAC of the id and `exp` under `MEDIA_URL_SECRET` and `exp` has not
 * passed. A missing, tampered or expired signature is 403; links off (no secret) or no `MEDIA`
 * is 404, as is a file no longer stored. Never a 5xx for a bad link.
 */
mediaRoutes.get("/:scope/:hash", async (c) => {
  const links = c.var.config.mediaLinks;
  if (!links || !c.env.MEDIA) return jsonError(c, 404, "file links are off", "not_found");
  const id = `${c.req.param("scope")}/${c.req.param("hash")}`;
  const verdict = await verifyMediaUrl(
    links.secret,
    id,
    c.req.query("exp") ?? null,
    c.req.query("sig") ?? null,
    Date.now() / 1000,
  );
  if (verdict !== "ok") {
    const why = verdict === "expired"
      ? "the link has expired"
      : "the link's signature is not valid";
    return jsonError(c, 403, why, verdict === "expired" ? "link_expired" : "invalid_signature");
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await r2MediaStore(c.env.MEDIA).get(id);
  } catch {
    c.header("retry-after", "5");
    return jsonError(c, 503, "the media store could not be read", "media_unavailable");
  }
  if (!bytes) return jsonError(c, 404, "the file is no longer stored", "not_found");
  return new Response(new Uint8Array(bytes), {
    headers: {
      "content-type": sniffMediaType(bytes) ?? "application/octet-stream",
      "content-length": String(bytes.length),
      // Named by its content: the bytes under an id never change, only the link expires.
      "cache-control": "private, max-age=3600",
      // Shown, never run: a browser opening the link gets no script context.
      "content-security-policy": "sandbox; default-src 'none'",
      "x-content-type-options": "nosniff",
    },
  });
});

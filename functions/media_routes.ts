// GET /media/{id}: a stored file (a tool's, sent by link to a platform or an API client) served to whoever holds its signed, expiring link; Workers (R2).
import { Hono } from "hono";
import { verifyMediaUrl } from "../lib/media/mod.ts";
import { type App, jsonError } from "./_http.ts";
import { mediaResponse } from "./_media_response.ts";

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
  return await mediaResponse(c, c.env.MEDIA, id, {
    message: "the file is no longer stored",
    code: "not_found",
  });
});

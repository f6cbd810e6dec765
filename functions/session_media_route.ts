// GET /v1/sessions/{key}/media/{id}: a session's stored image or file for the console, behind the API key (never a key in a URL); Workers (R2).
import type { Context } from "hono";
import { mayAddressSession } from "../lib/api/mod.ts";
import { mediaPrefix } from "../lib/media/mod.ts";
import { type App, jsonError, RequestError, sessionKeyParam } from "./_http.ts";
import { mediaResponse } from "./_media_response.ts";

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
  return await mediaResponse(c, c.env.MEDIA, id, {
    message: "the medium is no longer stored",
    code: "media_expired",
  });
}

// The request body limit: 1 MiB on every route, raised on the two OpenAI routes for one medium of MEDIA_MAX_BYTES when MEDIA is bound, their text still held to 1 MiB; Workers.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { mediaBodyLimit, mediaPayloadChars } from "../lib/openai/mod.ts";
import { type App, jsonError, MAX_BODY_BYTES, RequestError } from "./_http.ts";

/** The routes whose bodies may carry media (data-URL images, files, audio) as base64. */
const _MEDIA_ROUTES = new Set(["/v1/chat/completions", "/v1/responses", "/v1/responses/"]);

/** Whether a request may carry media past `MAX_BODY_BYTES`: an OpenAI POST with `MEDIA` bound. */
function _carriesMedia(c: Context<App>): boolean {
  return c.req.method === "POST" && c.env.MEDIA !== undefined && _MEDIA_ROUTES.has(c.req.path);
}

/**
 * The app's body limit: `MAX_BODY_BYTES`, or on a media route `mediaBodyLimit` of
 * `MEDIA_MAX_BYTES`. Past it, a 413 naming the limit (and what sets it), before anything is read
 * further: never a 5xx, never a turn.
 */
export const requestBodyLimit: MiddlewareHandler<App> = (c, next) => {
  const media = _carriesMedia(c);
  const maxSize = media
    ? mediaBodyLimit(MAX_BODY_BYTES, c.var.config.media.maxBytes)
    : MAX_BODY_BYTES;
  const why = media
    ? ` (one medium of MEDIA_MAX_BYTES as base64, plus ${MAX_BODY_BYTES} for the rest)`
    : "";
  return bodyLimit({
    maxSize,
    onError: (c) =>
      jsonError(c, 413, `request body over ${maxSize} bytes${why}`, "request_too_large"),
  })(c, next);
};

/**
 * Holds a media route's text to `MAX_BODY_BYTES` (a 413 naming it): the body's bytes less its
 * media payloads (`parsed`: the body as decoded). Only the media may use the raised limit.
 */
export function capTextBytes(body: Uint8Array, parsed: unknown): void {
  if (body.length <= MAX_BODY_BYTES) return;
  if (body.length - mediaPayloadChars(parsed) <= MAX_BODY_BYTES) return;
  throw new RequestError(
    413,
    `request body over ${MAX_BODY_BYTES} bytes besides its images, files and audio`,
    "request_too_large",
  );
}

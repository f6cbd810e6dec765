// The files a webhook delivery carries inline (the generic webhook's base64 attachments): checked (a 400 naming the attachment), then stored in MEDIA before the message is; Workers.
import type { Context } from "hono";
import {
  type MediaItem,
  type MediaPart,
  MediaRefusal,
  prepareFile,
  storePreparedImage,
} from "../lib/media/mod.ts";
import { type App, RequestError } from "./_http.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/**
 * Checks every inline file of a delivery (`prepareFile`: no `MEDIA` binding, over
 * `MEDIA_MAX_BYTES`, not base64, a type baton does not read — each a 400 naming the attachment,
 * before anything is stored or run), then stores them under `sessionKey`: the message keeps the
 * references.
 */
export async function storeWebhookFiles(
  c: Context<App>,
  files: readonly MediaPart[],
  sessionKey: string,
): Promise<MediaItem[]> {
  if (!files.length) return [];
  const checks = { stored: c.env.MEDIA !== undefined, settings: c.var.config.media };
  let prepared;
  try {
    prepared = files.map((file) => prepareFile(file, checks));
  } catch (error) {
    if (error instanceof MediaRefusal) {
      throw new RequestError(400, error.message, "invalid_request_error");
    }
    throw error;
  }
  const store = r2MediaStore(c.env.MEDIA!);
  return await Promise.all(prepared.map((file) => storePreparedImage(file, store, sessionKey)));
}

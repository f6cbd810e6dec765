// The images of an OpenAI API request: checked before anything is stored (a 400 naming the part), stored to MEDIA under the session that runs the turn; Workers.
import type { Context } from "hono";
import type { ChatMessage } from "../lib/agent/mod.ts";
import { tenantSessionKey } from "../lib/api/mod.ts";
import {
  type MediaPart,
  MediaRefusal,
  prepareRequestImages,
  type RequestImages,
  type StoredImages,
} from "../lib/media/mod.ts";
import { type App, RequestError } from "./_http.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/**
 * Checks a request's images, its earlier messages' (`earlier`, parts in their `media`) and its
 * last user message's (`input`): a refused one (no `MEDIA` binding, `VISION=off`, not an image
 * by its bytes, over `MEDIA_MAX_BYTES`, a URL neither data: nor https) is a 400 naming the part,
 * before the request is stored or claims its Idempotency-Key: no turn starts.
 */
export function apiImages(
  c: Context<App>,
  earlier: ChatMessage[],
  input: MediaPart[],
): RequestImages {
  try {
    return prepareRequestImages(earlier, input, {
      stored: c.env.MEDIA !== undefined,
      settings: c.var.config.media,
    });
  } catch (error) {
    if (error instanceof MediaRefusal) {
      throw new RequestError(400, error.message, "invalid_request_error");
    }
    throw error;
  }
}

/**
 * Stores a request's checked images in `MEDIA` under the caller's API session `session` (a data
 * URL's bytes; an https link is kept as it is, fetched inside the turn): the message then holds
 * references only.
 */
export async function storeApiImages(
  c: Context<App>,
  images: RequestImages,
  session: string,
): Promise<StoredImages> {
  const store = c.env.MEDIA ? r2MediaStore(c.env.MEDIA) : undefined;
  return await images.store(store, tenantSessionKey(c.var.tenant.name, session));
}

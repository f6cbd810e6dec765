// An image part checked where it arrives (a data URL decoded, typed by its bytes and held to MEDIA_MAX_BYTES; an https URL kept as a link), then stored; runtime-neutral.
import { decodeBase64 } from "../runtime/mod.ts";
import { type MediaItem, mediaKey, type MediaPart } from "./media_ref.ts";
import type { MediaSettings } from "./media_settings.ts";
import type { MediaStore } from "./media_store.ts";
import { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";

/**
 * An image part refused where it arrived; the message names the part and the limit (e.g.
 * `messages[0].content[1]: the image is 30000000 bytes, over MEDIA_MAX_BYTES (20000000)`): the
 * caller answers it as a 400, and no turn starts.
 */
export class MediaRefusal extends Error {
  override name = "MediaRefusal";
}

/** An image part that passed its checks: its bytes (a data URL's), or the https link to fetch in the turn. */
export type PreparedImage =
  | { bytes: Uint8Array; type: string; name?: string }
  | { url: string; name?: string };

/** What the checks need: whether the deployment has a media store, and its settings. */
export interface ImageChecks {
  /** A `MEDIA` store is bound. */
  stored: boolean;
  settings: MediaSettings;
}

const _DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),/;

/**
 * Checks one image part: refused (`MediaRefusal`) when the deployment has no media store or
 * `VISION=off`, when a data URL is not base64 or is over `MEDIA_MAX_BYTES`, when its bytes are
 * not an image (PNG, JPEG, GIF, WebP — whatever its declared type or name says), or when the URL
 * is neither `data:` nor https.
 */
export function prepareImage(part: MediaPart, checks: ImageChecks): PreparedImage {
  const refuse = (why: string) => new MediaRefusal(`${part.path}: ${why}`);
  if (!checks.stored || checks.settings.vision === "off") {
    throw refuse("images are off on this deployment");
  }
  const name = part.name ? { name: part.name.slice(0, 256) } : {};
  const { maxBytes } = checks.settings;
  const data = _DATA_URL.exec(part.url);
  if (data) {
    if (!data[2].split(";").includes("base64")) throw refuse("a data URL must be base64");
    const text = part.url.slice(data[0].length);
    // Decoded only when it can fit: base64 holds 3 bytes in 4 characters.
    const atMost = Math.floor(text.length / 4) * 3;
    if (atMost - 2 > maxBytes) {
      throw refuse(`the image is about ${atMost} bytes, over MEDIA_MAX_BYTES (${maxBytes})`);
    }
    const bytes = decodeBase64(text);
    if (!bytes) throw refuse("the data URL is not valid base64");
    if (bytes.length > maxBytes) {
      throw refuse(`the image is ${bytes.length} bytes, over MEDIA_MAX_BYTES (${maxBytes})`);
    }
    const type = sniffMediaType(bytes);
    if (!type || !IMAGE_TYPES.has(type)) {
      throw refuse(
        `not an image by its content (${type ?? "unknown type"}); PNG, JPEG, GIF and WebP are read`,
      );
    }
    return { bytes, type, ...name };
  }
  let url: URL | null = null;
  try {
    url = new URL(part.url);
  } catch {
    // refused below
  }
  if (url?.protocol !== "https:") throw refuse("an image URL must be a data: URL or an https URL");
  return { url: url.href, ...name };
}

/** Stores a prepared image under its session-scoped key (`mediaKey`); a link is kept as it is. */
export async function storePreparedImage(
  image: PreparedImage,
  store: MediaStore,
  scope: string,
): Promise<MediaItem> {
  if ("url" in image) return image;
  const id = await mediaKey(scope, image.bytes);
  await store.put(id, image.bytes, image.type);
  return {
    id,
    type: image.type,
    size: image.bytes.length,
    ...(image.name ? { name: image.name } : {}),
  };
}

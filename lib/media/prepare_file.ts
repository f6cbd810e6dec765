// An audio or file part checked where it arrives (a base64 data URL decoded, typed by its bytes, held to MEDIA_MAX_BYTES, its type one baton reads), before it is stored; runtime-neutral.
import { decodeBase64 } from "../runtime/mod.ts";
import { AUDIO_TYPES, mediaReading, mediaTextRefusal, readTypes } from "./derive_text.ts";
import type { MediaPart } from "./media_ref.ts";
import { type ImageChecks, MediaRefusal, type PreparedImage } from "./prepare_image.ts";
import { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";

const _DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),/;

/**
 * Checks an `audio` or `file` part (`MediaPart.kind`): refused (`MediaRefusal`, naming the part)
 * without a media store, when it is not a base64 data URL, over `MEDIA_MAX_BYTES`, audio whose
 * bytes are no recording, or of a type baton does not read (`mediaTextRefusal`: voice without
 * `TRANSCRIBE_BASE_URL`, a PDF where the deployment gave no pdf.js, a file neither text,
 * Markdown, CSV, JSON nor PDF). A file whose bytes are an image is taken as an image (refused
 * with `VISION=off`). What passes is stored as an image is (`storePreparedImage`) and read as
 * text inside the turn.
 */
export function prepareFile(part: MediaPart, checks: ImageChecks): PreparedImage {
  const what = part.kind === "audio" ? "audio" : "file";
  const refuse = (why: string) => new MediaRefusal(`${part.path}: ${why}`);
  if (!checks.stored) throw refuse(`${what} parts are off on this deployment`);
  const { maxBytes } = checks.settings;
  const data = _DATA_URL.exec(part.url);
  if (!data || !data[2].split(";").includes("base64")) {
    throw refuse(
      part.kind === "audio"
        ? "input_audio needs base64 `data` and a `format`"
        : "a file must be sent as base64 `file_data` (file ids and URLs are not read)",
    );
  }
  const text = part.url.slice(data[0].length);
  // Decoded only when it can fit: base64 holds 3 bytes in 4 characters.
  const atMost = Math.floor(text.length / 4) * 3;
  if (atMost - 2 > maxBytes) {
    throw refuse(`the ${what} is about ${atMost} bytes, over MEDIA_MAX_BYTES (${maxBytes})`);
  }
  const bytes = decodeBase64(text);
  if (!bytes) throw refuse(`the ${what} is not valid base64`);
  if (bytes.length > maxBytes) {
    throw refuse(`the ${what} is ${bytes.length} bytes, over MEDIA_MAX_BYTES (${maxBytes})`);
  }
  const type = sniffMediaType(bytes) ?? "";
  const name = part.name ? { name: part.name.slice(0, 256) } : {};
  if (part.kind === "audio" && !AUDIO_TYPES.has(type)) {
    throw refuse(`not audio by its content (${type || "unknown type"})`);
  }
  if (!type) {
    // Named by what the client declared, as the bytes say nothing baton knows.
    const declared = data[1] && data[1] !== "application/octet-stream" ? data[1] : "";
    throw refuse(
      `${declared || "a file of unknown type"} is not read (its bytes are no type baton reads): ` +
        readTypes(checks.settings.pdf !== null),
    );
  }
  if (IMAGE_TYPES.has(type)) {
    if (checks.settings.vision === "off") throw refuse("images are off on this deployment");
    return { bytes, type, ...name };
  }
  const refused = mediaTextRefusal(type, mediaReading(checks.settings));
  if (refused) throw refuse(refused);
  return { bytes, type, ...name };
}

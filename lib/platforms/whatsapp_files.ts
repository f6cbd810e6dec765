// WhatsApp files out: a file part as a Cloud API media message by link (`image` or `document`, `link` the signed /media URL); runtime-neutral.
import type { OutgoingFile } from "../chat/mod.ts";
import { fileFits, JPEG_PNG } from "./_file_out.ts";

/** WhatsApp's limits on media sent by link: images (JPEG, PNG) to 5 MB, documents to 100 MB. */
const _IMAGE_MAX_BYTES = 5 * 1024 * 1024;
const _DOCUMENT_MAX_BYTES = 100 * 1024 * 1024;
/** The longest caption a media message takes. */
const _CAPTION_CHARS = 1024;

/**
 * The message content of `file` as WhatsApp media fetched by link: `image` for a JPEG or PNG up to
 * 5 MB, else `document` (with its file name) up to 100 MB, `caption` under it. Null where there is
 * no link (no `PUBLIC_URL` or `MEDIA_URL_SECRET`) or the file is too big: the caller sends the
 * text instead. WhatsApp downloads the link when it takes the message, well within its expiry.
 */
export function whatsappFileContent(
  file: OutgoingFile,
  caption: string,
): Record<string, unknown> | null {
  if (!file.url) return null;
  const said = caption ? { caption: caption.slice(0, _CAPTION_CHARS) } : {};
  if (fileFits(file, JPEG_PNG, _IMAGE_MAX_BYTES)) {
    return { type: "image", image: { link: file.url, ...said } };
  }
  if (file.size > _DOCUMENT_MAX_BYTES) return null;
  return {
    type: "document",
    document: { link: file.url, filename: file.name ?? "file", ...said },
  };
}

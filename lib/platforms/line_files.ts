// LINE files out: a file part as an image message (`originalContentUrl` and `previewImageUrl` the signed /media URL), other files as their link in text; runtime-neutral.
import type { OutgoingFile } from "../chat/mod.ts";
import { fileFits, JPEG_PNG } from "./_file_out.ts";

/**
 * The largest image sent as an image message: LINE's limit on `previewImageUrl` (1 MB; the
 * original may be 10 MB), since one signed link serves as both. A bigger image goes as its link.
 */
const _IMAGE_MAX_BYTES = 1024 * 1024;

/**
 * `file` as a LINE image message (a JPEG or PNG up to 1 MB, with a signed link), or null: LINE has
 * no message for other files, and without a link nothing can be shown — the caller sends the
 * file's link, or its note, as text.
 */
export function lineImageMessage(file: OutgoingFile): Record<string, unknown> | null {
  if (!file.url || !fileFits(file, JPEG_PNG, _IMAGE_MAX_BYTES)) return null;
  return { type: "image", originalContentUrl: file.url, previewImageUrl: file.url };
}

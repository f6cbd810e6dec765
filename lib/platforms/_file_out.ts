// What the adapters that send files by link share (WhatsApp, LINE, Twilio): which files go as native media, and the text a file stands as otherwise; runtime-neutral.
import { fileNote, type OutgoingFile } from "../chat/mod.ts";

/**
 * The text a file stands as where it cannot go as the platform's own media (no signed link,
 * a type or size the platform refuses): its note — with its signed link where there is one — and
 * the caption under it, as `sendFilePart` words an adapter without `sendFile`.
 */
export function fileAsText(file: OutgoingFile, caption: string): string {
  const note = fileNote(file, file.url);
  return caption ? `${note}\n\n${caption}` : note;
}

/** Whether `file` is one of `types` and at most `maxBytes`: what a platform takes as native media. */
export function fileFits(
  file: OutgoingFile,
  types: ReadonlySet<string>,
  maxBytes: number,
): boolean {
  return types.has(file.type) && file.size <= maxBytes;
}

/** JPEG and PNG: the images every platform here shows inline. */
export const JPEG_PNG: ReadonlySet<string> = new Set(["image/jpeg", "image/png"]);

// Twilio files out: which file parts go as MMS media (`MediaUrl` the signed /media URL); runtime-neutral.
import type { OutgoingFile } from "../chat/mod.ts";
import { fileFits } from "./_file_out.ts";

/** The images Twilio sends as MMS on every carrier (other types are carrier-dependent). */
const _MMS_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif"]);
/** Twilio's limit on one message's media. */
const _MMS_MAX_BYTES = 5 * 1024 * 1024;

/**
 * The `MediaUrl` of `file` as Twilio MMS: its signed link for a JPEG, PNG or GIF up to 5 MB; null
 * without a link or for any other file, which the caller sends as its link (or note) in text.
 * Twilio fetches the link once, when it takes the message.
 */
export function twilioMediaUrl(file: OutgoingFile): string | null {
  return file.url && fileFits(file, _MMS_TYPES, _MMS_MAX_BYTES) ? file.url : null;
}

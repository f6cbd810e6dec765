// Discord files out: a reply part's file as a message attachment (multipart `files[0]` beside `payload_json`); runtime-neutral.
import type { OutgoingFile } from "../chat/mod.ts";

/** Discord's upload limit for a server without boosts (10 MiB); a bigger file goes as its link. */
export const DISCORD_FILE_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The multipart body of a message carrying `file` as its one attachment: the message fields
 * (`payload`) as `payload_json`, naming the upload in `attachments` (id 0 is `files[0]`) so that an
 * edit of `@original` replaces whatever attachment an earlier attempt of the edit left there.
 */
export function discordFileForm(payload: Record<string, unknown>, file: OutgoingFile): FormData {
  const filename = file.name ?? "file";
  const form = new FormData();
  form.set("payload_json", JSON.stringify({ ...payload, attachments: [{ id: 0, filename }] }));
  form.set("files[0]", new Blob([new Uint8Array(file.bytes)], { type: file.type }), filename);
  return form;
}

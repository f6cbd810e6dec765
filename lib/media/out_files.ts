// Files out: a tool's files checked (base64 or an https URL fetched once, within MEDIA_MAX_BYTES, typed by their bytes) and stored in MEDIA for the reply; runtime-neutral (fetch).
import type { ToolFile, ToolFileStore } from "../agent/tool_files.ts";
import { decodeBase64 } from "../runtime/mod.ts";
import { downloadMedia } from "./download_media.ts";
import { mediaKey, type MediaRef } from "./media_ref.ts";
import type { MediaStore } from "./media_store.ts";
import { sniffMediaType } from "./sniff_media_type.ts";

/** The type of bytes no signature names: sent as a generic file, never as an image. */
export const UNKNOWN_FILE_TYPE = "application/octet-stream";

/** Files one tool result may send; more are refused by name (a reply is not a file dump). */
export const MAX_FILES_PER_RESULT = 10;

const _DATA_URL = /^data:[^,]*;base64,/;

/** What storing a turn's outgoing files needs. */
export interface OutFileOptions {
  store: MediaStore;
  /** The session key: files are stored under its prefix, as its incoming media are (`mediaKey`). */
  scope: string;
  /** `MEDIA_MAX_BYTES`. */
  maxBytes: number;
}

/**
 * The `ToolFileStore` of a turn: each file's bytes (base64 `data`, a `data:` URL, or an https
 * `url` downloaded within the turn's signal) held to `MEDIA_MAX_BYTES`, typed by content
 * (`sniffMediaType`; bytes no signature names are `application/octet-stream`, whatever the
 * tool stated) and stored in `MEDIA`. A file that fails is refused by name with the reason.
 */
export function outFileStore(options: OutFileOptions): ToolFileStore {
  return async (files, signal) => {
    const stored: MediaRef[] = [];
    const refused: string[] = [];
    for (const [i, file] of files.entries()) {
      const name = _name(file, i);
      if (i >= MAX_FILES_PER_RESULT) {
        refused.push(`${name}: over ${MAX_FILES_PER_RESULT} files in one result`);
        continue;
      }
      const got = await _bytes(file, options.maxBytes, signal);
      if (typeof got === "string") {
        refused.push(`${name}: ${got}`);
        continue;
      }
      const type = sniffMediaType(got) ?? UNKNOWN_FILE_TYPE;
      const id = await mediaKey(options.scope, got);
      try {
        await options.store.put(id, got, type);
      } catch {
        refused.push(`${name}: the media store could not keep it`);
        continue;
      }
      stored.push({ id, type, size: got.length, name });
    }
    return { stored, refused };
  };
}

/** A file's name as it is sent: its last path segment, without control characters, at most 200. */
function _name(file: ToolFile, index: number): string {
  // Control characters are what is removed.
  // deno-lint-ignore no-control-regex
  const base = file.name.split(/[\\/]/).pop()?.replace(/[\u0000-\u001f\u007f"]/g, "").trim();
  return (base || `file-${index + 1}`).slice(0, 200);
}

/** The file's bytes, or why it cannot be read. */
async function _bytes(
  file: ToolFile,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array | string> {
  if (typeof file.data === "string") {
    const text = file.data.replace(_DATA_URL, "");
    if (Math.floor(text.length / 4) * 3 - 2 > maxBytes) {
      return `over MEDIA_MAX_BYTES (${maxBytes})`;
    }
    const bytes = decodeBase64(text);
    if (!bytes) return "`data` is not valid base64";
    if (bytes.length > maxBytes) return `over MEDIA_MAX_BYTES (${maxBytes})`;
    return bytes.length ? bytes : "the file is empty";
  }
  const url = file.url ?? "";
  if (!/^https:\/\//i.test(url)) return "a `url` must be https";
  const got = await downloadMedia(url, {}, { api: "file's server", maxBytes, signal });
  if (!got.ok) return got.why;
  return got.bytes.length ? got.bytes : "the file is empty";
}

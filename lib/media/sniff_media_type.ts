// The MIME type of bytes by their content (magic numbers, then a plain-text test), never by a name; runtime-neutral.

/** A magic number: `bytes` at `offset` (null: any byte). */
interface _Magic {
  type: string;
  offset: number;
  bytes: readonly (number | null)[];
}

const _ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Checked in order: the more specific signature first (WebP and WAV share RIFF). */
const _MAGICS: readonly _Magic[] = [
  { type: "image/png", offset: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: "image/jpeg", offset: 0, bytes: [0xff, 0xd8, 0xff] },
  { type: "image/gif", offset: 0, bytes: _ascii("GIF87a") },
  { type: "image/gif", offset: 0, bytes: _ascii("GIF89a") },
  {
    type: "image/webp",
    offset: 0,
    bytes: [..._ascii("RIFF"), null, null, null, null, ..._ascii("WEBP")],
  },
  {
    type: "audio/wav",
    offset: 0,
    bytes: [..._ascii("RIFF"), null, null, null, null, ..._ascii("WAVE")],
  },
  { type: "application/pdf", offset: 0, bytes: _ascii("%PDF-") },
  { type: "audio/mpeg", offset: 0, bytes: _ascii("ID3") },
];

/** The types of `sniffMediaType` that are images a vision model takes. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/**
 * The types `sniffMediaType` tells by a signature (all but `text/plain`): bytes stated as one of
 * these that the signature does not match are not that type (a "PDF" of garbage is corrupt).
 */
export const SIGNED_TYPES: ReadonlySet<string> = new Set([
  ..._MAGICS.map((m) => m.type),
  "audio/ogg",
  "audio/mpeg",
  "audio/mp4",
  "video/mp4",
]);

/**
 * The MIME type of `bytes` by their content: PNG, JPEG, GIF, WebP, PDF, OGG (`audio/ogg`, Opus
 * or Vorbis inside), MP3, MP4/M4A (`audio/mp4` for an M4A brand, else `video/mp4`), WAV, then
 * `text/plain` for valid UTF-8 without control characters; null when none fits. The type is
 * decided by the bytes alone: a GIF named `.png` is a GIF, and a name never makes bytes an image.
 */
export function sniffMediaType(bytes: Uint8Array): string | null {
  for (const magic of _MAGICS) {
    if (_matches(bytes, magic.offset, magic.bytes)) return magic.type;
  }
  if (_matches(bytes, 0, _ascii("OggS"))) return "audio/ogg";
  // An MP3 without an ID3 tag starts with a frame sync: 11 set bits.
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0) return "audio/mpeg";
  if (_matches(bytes, 4, _ascii("ftyp"))) {
    const brand = String.fromCharCode(...bytes.subarray(8, 12));
    return brand.startsWith("M4A") || brand.startsWith("M4B") ? "audio/mp4" : "video/mp4";
  }
  return _isText(bytes) ? "text/plain" : null;
}

function _matches(bytes: Uint8Array, offset: number, magic: readonly (number | null)[]): boolean {
  if (bytes.length < offset + magic.length) return false;
  return magic.every((b, i) => b === null || bytes[offset + i] === b);
}

/** Valid UTF-8 (in its first 4 KiB) with no control characters but tab, newline, CR and form feed. */
function _isText(bytes: Uint8Array): boolean {
  if (!bytes.length) return false;
  const head = bytes.subarray(0, 4096);
  let text: string;
  try {
    // A multi-byte character cut at the 4 KiB edge is not an error: `stream` keeps it pending.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(head, {
      stream: head.length < bytes.length,
    });
  } catch {
    return false;
  }
  // Control characters are what the test looks for.
  // deno-lint-ignore no-control-regex
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
}

// How long a recording is, read from its container's header (WAV, Ogg Opus/Vorbis, MP4/M4A), and how a length is written; runtime-neutral.

/**
 * The length of the recording in `bytes` of MIME type `type`, in seconds, read from its
 * container: WAV (data size over byte rate), Ogg (the last page's granule position over the
 * Opus or Vorbis sample rate), MP4/M4A (the `mvhd` box). Null where the container does not say
 * it cheaply (MP3 has no length field) or the bytes are malformed: a label then goes without it.
 */
export function audioDuration(bytes: Uint8Array, type: string): number | null {
  try {
    const seconds = type === "audio/wav"
      ? _wav(bytes)
      : type === "audio/ogg"
      ? _ogg(bytes)
      : type === "audio/mp4" || type === "video/mp4"
      ? _mp4(bytes)
      : null;
    return seconds !== null && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  } catch {
    return null;
  }
}

/** `seconds` as a clock reads it: `0:42`, `12:05`, `1:02:03` (rounded to the second). */
export function formatDuration(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

const _view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
const _tag = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

/** RIFF chunks after the 12-byte header: `fmt ` gives the byte rate, `data` the size. */
function _wav(bytes: Uint8Array): number | null {
  const view = _view(bytes);
  let byteRate = 0;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = _tag(bytes, at);
    const size = view.getUint32(at + 4, true);
    if (id === "fmt " && at + 20 <= bytes.length) byteRate = view.getUint32(at + 16, true);
    if (id === "data") return byteRate ? size / byteRate : null;
    at += 8 + size + (size % 2);
  }
  return null;
}

/** The first page's packet names the codec (its sample rate); the last page's granule is the end. */
function _ogg(bytes: Uint8Array): number | null {
  const view = _view(bytes);
  const packet = 27 + bytes[26];
  let rate: number;
  let skip = 0;
  if (_ascii(bytes, packet, "OpusHead")) {
    rate = 48_000; // Opus granules count 48 kHz samples whatever the input rate was
    skip = view.getUint16(packet + 10, true);
  } else if (bytes[packet] === 1 && _ascii(bytes, packet + 1, "vorbis")) {
    rate = view.getUint32(packet + 12, true);
  } else {
    return null;
  }
  for (let at = bytes.length - 27; at >= 0; at--) {
    if (!_ascii(bytes, at, "OggS")) continue;
    const granule = Number(view.getBigUint64(at + 6, true));
    return rate ? Math.max(0, granule - skip) / rate : null;
  }
  return null;
}

/** The movie header: `timescale` units per second and the `duration` in them (version 0 or 1; big-endian). */
function _mp4(bytes: Uint8Array): number | null {
  const view = _view(bytes);
  for (let at = 4; at + 32 <= bytes.length; at++) {
    if (!_ascii(bytes, at, "mvhd")) continue;
    const version = bytes[at + 4];
    if (version === 1) {
      const scale = view.getUint32(at + 4 + 4 + 16);
      const duration = Number(view.getBigUint64(at + 4 + 4 + 20));
      return scale ? duration / scale : null;
    }
    const scale = view.getUint32(at + 4 + 4 + 8);
    const duration = view.getUint32(at + 4 + 4 + 12);
    return scale ? duration / scale : null;
  }
  return null;
}

function _ascii(bytes: Uint8Array, at: number, text: string): boolean {
  if (at < 0 || at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

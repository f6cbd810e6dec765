// Bytes and their text forms: hex, base64, and a UTF-8 prefix joined to a body; runtime-neutral (web standards only).

const _encoder = new TextEncoder();
const _HEX = /^(?:[0-9a-fA-F]{2})+$/;
const _BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Lower-case hex of `bytes`. */
export function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of non-empty hex (either case), or null; with `length`, also null unless that many bytes. */
export function decodeHex(text: string, length?: number): Uint8Array<ArrayBuffer> | null {
  if (!_HEX.test(text) || (length !== undefined && text.length !== length * 2)) return null;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** Standard base64 (with padding) of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The bytes of standard, padded base64, or null when `text` is not that (or not `length` bytes). */
export function decodeBase64(text: string, length?: number): Uint8Array<ArrayBuffer> | null {
  if (!_BASE64.test(text) || text.length % 4 !== 0) return null;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (length !== undefined && binary.length !== length) return null;
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** `prefix` (UTF-8) followed by `body`: the signed content of Slack and Discord requests. */
export function withPrefix(prefix: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const head = _encoder.encode(prefix);
  const data = new Uint8Array(head.length + body.length);
  data.set(head, 0);
  data.set(body, head.length);
  return data;
}

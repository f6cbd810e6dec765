// Signatures and secret comparison: HMAC sign/verify (SHA-256, or SHA-1 for Twilio) and a constant-time equality; runtime-neutral (Web Crypto).

const _encoder = new TextEncoder();

/** The hash under an HMAC: SHA-256 everywhere but Twilio, whose signatures are HMAC-SHA1. */
export type HmacHash = "SHA-256" | "SHA-1";

// A text secret is its UTF-8 bytes; a byte secret (Standard Webhooks' decoded key) is taken as is.
function _hmacKey(
  secret: string | Uint8Array,
  usage: "sign" | "verify",
  hash: HmacHash,
): Promise<CryptoKey> {
  const raw = typeof secret === "string" ? _encoder.encode(secret) : new Uint8Array(secret);
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash }, false, [usage]);
}

/** HMAC-SHA256 (or `hash`) of `data` (text as UTF-8) under `secret` (text as UTF-8, or key bytes). */
export async function hmacSign(
  secret: string | Uint8Array,
  data: string | Uint8Array,
  hash: HmacHash = "SHA-256",
): Promise<Uint8Array> {
  // A copy: Web Crypto takes only ArrayBuffer-backed views, and a caller's view may not be one.
  const bytes = typeof data === "string" ? _encoder.encode(data) : new Uint8Array(data);
  const key = await _hmacKey(secret, "sign", hash);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes));
}

/** Whether `signature` is the HMAC-SHA256 (or `hash`) of `data` under `secret` (as in `hmacSign`); Web Crypto compares in constant time. */
export async function hmacVerify(
  secret: string | Uint8Array,
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array,
  hash: HmacHash = "SHA-256",
): Promise<boolean> {
  const key = await _hmacKey(secret, "verify", hash);
  return crypto.subtle.verify("HMAC", key, signature, new Uint8Array(data));
}

/**
 * Whether two secrets are equal, in time that depends on neither: both are hashed to equal-length
 * SHA-256 digests and every byte pair is compared (no early exit, no length leak).
 */
export async function constantTimeEquals(a: string, b: string): Promise<boolean> {
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", _encoder.encode(text)));
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

// Standard Webhooks signature verification (webhook-id/-timestamp/-signature); any runtime with Web Crypto.

/** Why a Standard Webhooks request was refused. */
export type WebhookRefusal = "missing_headers" | "bad_secret" | "stale_timestamp" | "bad_signature";

/** Result of verifying one delivery. */
export type WebhookVerification =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: WebhookRefusal; message: string };

const _SECRET_PREFIX = "whsec_";
const _BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const _DIGITS = /^[0-9]+$/;
const _HMAC = { name: "HMAC", hash: "SHA-256" };
const _encoder = new TextEncoder();

function _refuse(reason: WebhookRefusal, message: string): WebhookVerification {
  return { ok: false, reason, message };
}

function _decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!_BASE64.test(text) || text.length % 4 === 1) return null;
  try {
    const raw = atob(text);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

function _encodeBase64(bytes: Uint8Array): string {
  let raw = "";
  for (let i = 0; i < bytes.length; i++) raw += String.fromCharCode(bytes[i]);
  return btoa(raw);
}

async function _importKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey | null> {
  const encoded = secret.startsWith(_SECRET_PREFIX) ? secret.slice(_SECRET_PREFIX.length) : secret;
  const keyBytes = _decodeBase64(encoded);
  if (!keyBytes || keyBytes.length === 0) return null;
  try {
    return await crypto.subtle.importKey("raw", keyBytes, _HMAC, false, [usage]);
  } catch {
    return null;
  }
}

function _signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = _encoder.encode(`${id}.${timestamp}.`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix, 0);
  data.set(body, prefix.length);
  return data;
}

/** Verifies a Standard Webhooks delivery (webhook-id, webhook-timestamp, webhook-signature headers). */
export async function verifyStandardWebhook(opts: {
  secret: string;
  headers: Headers;
  body: Uint8Array;
  nowSeconds?: number;
  toleranceSeconds?: number;
}): Promise<WebhookVerification> {
  const id = opts.headers.get("webhook-id");
  const timestampHeader = opts.headers.get("webhook-timestamp");
  const signatureHeader = opts.headers.get("webhook-signature");
  if (!id || !timestampHeader || !signatureHeader) {
    const missing = [
      ["webhook-id", id],
      ["webhook-timestamp", timestampHeader],
      ["webhook-signature", signatureHeader],
    ].filter(([, value]) => !value).map(([name]) => name);
    return _refuse("missing_headers", `missing or empty header(s): ${missing.join(", ")}`);
  }

  const key = await _importKey(opts.secret, "verify");
  if (!key) {
    return _refuse("bad_secret", "webhook secret does not decode as base64");
  }

  if (!_DIGITS.test(timestampHeader)) {
    return _refuse("stale_timestamp", "webhook-timestamp is not an integer number of seconds");
  }
  const timestamp = Number(timestampHeader);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (!Number.isSafeInteger(timestamp) || Math.abs(now - timestamp) > tolerance) {
    return _refuse("stale_timestamp", `webhook-timestamp is outside ±${tolerance}s of now`);
  }

  const data = _signedContent(id, timestampHeader, opts.body);
  for (const entry of signatureHeader.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const sig = _decodeBase64(entry.slice(comma + 1));
    if (!sig) continue;
    try {
      if (await crypto.subtle.verify("HMAC", key, sig, data)) return { ok: true, id, timestamp };
    } catch {
      // A malformed entry simply does not match.
    }
  }
  return _refuse("bad_signature", "no v1 signature in webhook-signature matches");
}

/** Signs `${id}.${timestamp}.${body}` the way a Standard Webhooks sender does; returns "v1,<base64>". For tests and tooling. */
export async function signStandardWebhook(opts: {
  secret: string;
  id: string;
  timestamp: number;
  body: Uint8Array | string;
}): Promise<string> {
  if (!Number.isSafeInteger(opts.timestamp) || opts.timestamp < 0) {
    throw new TypeError("timestamp must be a non-negative integer number of seconds");
  }
  const key = await _importKey(opts.secret, "sign");
  if (!key) throw new TypeError("webhook secret does not decode as base64");
  const body = typeof opts.body === "string" ? _encoder.encode(opts.body) : opts.body;
  const data = _signedContent(opts.id, String(opts.timestamp), body);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
  return `v1,${_encodeBase64(sig)}`;
}

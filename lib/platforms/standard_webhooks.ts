// Standard Webhooks signature verification (webhook-id/-timestamp/-signature) over the runtime's bytes and HMAC and the adapter kit's time window; any runtime with Web Crypto.
import { TIMESTAMP_TOLERANCE_SECONDS, timestampProblem } from "./_kit.ts";
import { decodeBase64, encodeBase64, hmacSign, hmacVerify, withPrefix } from "../runtime/mod.ts";

/** Why a Standard Webhooks request was refused. */
export type WebhookRefusal = "missing_headers" | "bad_secret" | "stale_timestamp" | "bad_signature";

/** Result of verifying one delivery. */
export type WebhookVerification =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: WebhookRefusal; message: string };

const _SECRET_PREFIX = "whsec_";
const _encoder = new TextEncoder();

function _refuse(reason: WebhookRefusal, message: string): WebhookVerification {
  return { ok: false, reason, message };
}

// Senders may leave the padding off (a secret, a signature): it is put back before the kit's
// strict decoder reads it; text already padded, or of a length no padding mends, stays refused.
function _decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  const padded = text.includes("=") ? text : text + "=".repeat((4 - text.length % 4) % 4);
  return decodeBase64(padded);
}

/** The key bytes of a `whsec_` secret (the prefix is optional), or null when they are none. */
function _keyBytes(secret: string): Uint8Array<ArrayBuffer> | null {
  const encoded = secret.startsWith(_SECRET_PREFIX) ? secret.slice(_SECRET_PREFIX.length) : secret;
  const bytes = _decodeBase64(encoded);
  return bytes && bytes.length > 0 ? bytes : null;
}

function _signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return withPrefix(`${id}.${timestamp}.`, body);
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

  const key = _keyBytes(opts.secret);
  if (!key) {
    return _refuse("bad_secret", "webhook secret does not decode as base64");
  }

  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? TIMESTAMP_TOLERANCE_SECONDS;
  const problem = timestampProblem(timestampHeader, now, tolerance);
  if (problem === "malformed") {
    return _refuse("stale_timestamp", "webhook-timestamp is not an integer number of seconds");
  }
  if (problem === "outside") {
    return _refuse("stale_timestamp", `webhook-timestamp is outside ±${tolerance}s of now`);
  }
  const timestamp = Number(timestampHeader);

  const data = _signedContent(id, timestampHeader, opts.body);
  for (const entry of signatureHeader.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const sig = _decodeBase64(entry.slice(comma + 1));
    if (!sig) continue;
    try {
      if (await hmacVerify(key, sig, data)) return { ok: true, id, timestamp };
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
  const key = _keyBytes(opts.secret);
  if (!key) throw new TypeError("webhook secret does not decode as base64");
  const body = typeof opts.body === "string" ? _encoder.encode(opts.body) : opts.body;
  const data = _signedContent(opts.id, String(opts.timestamp), body);
  return `v1,${encodeBase64(await hmacSign(key, data))}`;
}

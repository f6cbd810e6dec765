// Ed25519 test keys and request signing for Discord interaction tests; Deno (Web Crypto).

/** An extractable Ed25519 key pair plus its raw public key as hex. */
export interface DiscordTestKeys extends CryptoKeyPair {
  /** The raw 32-byte public key as 64 lower-case hex digits: the DISCORD_PUBLIC_KEY format. */
  publicKeyHex: string;
}

/** Lower-case hex of `bytes`, two digits per byte. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Generates a fresh Ed25519 key pair, as a Discord application would own. */
export async function discordTestKeys(): Promise<DiscordTestKeys> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, publicKeyHex: hex(raw) };
}

/**
 * The `X-Signature-Ed25519` header value (hex) Discord would send: the Ed25519 signature of
 * the `X-Signature-Timestamp` value followed by the raw request body.
 */
export async function signDiscordRequest(
  { privateKey, timestamp, body }: {
    privateKey: CryptoKey;
    timestamp: string;
    body: string | Uint8Array;
  },
): Promise<string> {
  const signature = await crypto.subtle.sign("Ed25519", privateKey, _signedBytes(timestamp, body));
  return hex(new Uint8Array(signature));
}

function _signedBytes(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const head = new TextEncoder().encode(timestamp);
  const tail = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const bytes = new Uint8Array(head.length + tail.length);
  bytes.set(head);
  bytes.set(tail, head.length);
  return bytes;
}

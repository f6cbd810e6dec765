// Test support: the Discord adapter's unit-test fixtures (ids, env, signed interactions); Deno (tests only).
import type { RawRequest } from "../chat/mod.ts";

/** The fixtures' clock, in seconds. */
export const NOW = 1_767_000_000;
/** The Discord application id interactions are addressed to. */
export const APP_ID = "1100000000000000001";
/** The interaction token, which must never show in a result or a log. */
export const TOKEN = "aW50ZXJhY3Rpb24tdG9rZW4tc2VjcmV0";

/** An Ed25519 key pair as `discordTestKeys()` in test/_support/discord_signer.ts makes it. */
export interface SigningKeys {
  /** The key requests are signed with. */
  privateKey: CryptoKey;
  /** The raw public key as hex: the DISCORD_PUBLIC_KEY format. */
  publicKeyHex: string;
}

/** Signs a request body as `signDiscordRequest()` in test/_support/discord_signer.ts does. */
export type DiscordSign = (
  request: { privateKey: CryptoKey; timestamp: string; body: Uint8Array },
) => Promise<string>;

/** The env and request signer of the tests over one key pair. */
export interface DiscordFixtures {
  /** The hex public key of the pair the fixtures sign with. */
  PUBLIC_KEY: string;
  /** An env with PUBLIC_KEY and APP_ID. */
  ENV: { DISCORD_PUBLIC_KEY: string; DISCORD_APPLICATION_ID: string };
  /** A request carrying `payload` as JSON (or `opts.body`), signed at NOW unless `opts` say otherwise. */
  signed(
    payload: unknown,
    opts?: { timestamp?: string; body?: string; signature?: string; nowSeconds?: number },
  ): Promise<RawRequest>;
}

/**
 * The fixtures over `keys`, signing with `sign`. Both come from test/_support/discord_signer.ts,
 * passed in rather than imported: tsc checks lib/ (all but *_test.ts) and should not reach test/.
 */
export function discordFixtures(keys: SigningKeys, sign: DiscordSign): DiscordFixtures {
  const PUBLIC_KEY = keys.publicKeyHex;
  const ENV = { DISCORD_PUBLIC_KEY: PUBLIC_KEY, DISCORD_APPLICATION_ID: APP_ID };
  async function signed(
    payload: unknown,
    opts: { timestamp?: string; body?: string; signature?: string; nowSeconds?: number } = {},
  ): Promise<RawRequest> {
    const timestamp = opts.timestamp ?? String(NOW);
    const body = new TextEncoder().encode(opts.body ?? JSON.stringify(payload));
    const signature = opts.signature ??
      await sign({ privateKey: keys.privateKey, timestamp, body });
    return {
      headers: new Headers({
        "x-signature-ed25519": signature,
        "x-signature-timestamp": timestamp,
      }),
      body,
      url: "https://baton.test/webhooks/discord",
      nowSeconds: opts.nowSeconds ?? NOW,
    };
  }
  return { PUBLIC_KEY, ENV, signed };
}

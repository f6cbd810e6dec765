// Test support: RSA signing keys, signed JWTs and service-account key JSON made with jose, for the Teams and Google Chat tests; Deno (tests only).
import {
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  type GenerateKeyPairResult,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";

// jose's own key type: the runtime's CryptoKey, which Deno's and the Workers' types name apart.
type _Key = GenerateKeyPairResult["privateKey"];

/** A freshly generated RS256 key: the private half signs, `jwk` is the public half as published. */
export interface TestSigningKey {
  privateKey: _Key;
  publicKey: _Key;
  /** The public JWK with `kid`, `alg`, `use` and any extra members (Bot Framework endorsements). */
  jwk: JWK & Record<string, unknown>;
}

/** Generates an RS256 key named `kid`; `extra` joins its published JWK (e.g. `endorsements`). */
export async function testSigningKey(
  kid: string,
  extra: Record<string, unknown> = {},
): Promise<TestSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig", ...extra };
  return { privateKey, publicKey, jwk };
}

/** What a test token says: issuer, audience, lifetime (seconds from `now`) and other claims. */
export interface TestClaims {
  issuer: string;
  audience: string;
  /** Seconds since the epoch the token is issued at; default now. */
  now?: number;
  /** Seconds it lasts; negative for a token already expired. Default 3600. */
  lifetime?: number;
  claims?: JWTPayload;
  /** The key id in the header; default the key's own. */
  kid?: string;
}

/** A compact RS256 JWT signed with `key`, as a platform would send it in `Authorization: Bearer`. */
export function signTestJwt(key: TestSigningKey, c: TestClaims): Promise<string> {
  const now = c.now ?? Math.floor(Date.now() / 1000);
  const lifetime = c.lifetime ?? 3600;
  return new SignJWT(c.claims ?? {})
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: c.kid ?? String(key.jwk.kid) })
    .setIssuer(c.issuer)
    .setAudience(c.audience)
    .setIssuedAt(Math.min(now, now + lifetime) - 60)
    .setNotBefore(Math.min(now, now + lifetime) - 60)
    .setExpirationTime(now + lifetime)
    .sign(key.privateKey);
}

/** A Google service-account key JSON (as the console downloads it) over a fresh RSA key. */
export async function testServiceAccount(
  email = "baton-bot@baton-test.iam.gserviceaccount.com",
): Promise<{ json: string; privateKeyPem: string; key: TestSigningKey; email: string }> {
  const key = await testSigningKey("sa-key-1");
  const privateKeyPem = await exportPKCS8(key.privateKey);
  const json = JSON.stringify({
    type: "service_account",
    project_id: "baton-test",
    private_key_id: "sa-key-1",
    private_key: privateKeyPem,
    client_email: email,
    client_id: "100000000000000000001",
    token_uri: "https://oauth2.googleapis.com/token",
  });
  return { json, privateKeyPem, key, email };
}

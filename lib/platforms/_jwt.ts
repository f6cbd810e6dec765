// JWT plumbing for the platforms that sign with JWTs (Teams, Google Chat) over jose: cached key sets, bearer verification, cached access tokens; runtime-neutral (fetch, Web Crypto).
import type { createLocalJWKSet, JSONWebKeySet, JWK, JWTPayload, JWTVerifyOptions } from "jose";
import {
  CREDENTIAL_WAIT_OUT,
  fetchOut,
  HTTP_OUT_TIMEOUT_MS,
  OutboundError,
  readJsonAnswer,
  retryAfterHeader,
  statedWaitMs,
} from "../runtime/mod.ts";
import type { SendResult, Unverifiable } from "../chat/mod.ts";
import { jsonField, readJson, redact } from "./_kit.ts";

/** How long fetched keys (and OpenID metadata) are trusted before they are fetched again. */
const _KEYS_TTL_MS = 60 * 60 * 1000;
/** A token signed by a key we do not know refetches the keys, at most this often (rotation). */
const _REFETCH_MIN_MS = 60 * 1000;
/** An access token is renewed this long before it expires, so none expires in flight. */
const _TOKEN_MARGIN_MS = 5 * 60 * 1000;
/** How far a token's times may be from ours, either way (the Bot Framework allows 5 minutes). */
export const JWT_CLOCK_TOLERANCE_SECONDS = 300;

/**
 * jose, imported on the first token verified, not at start-up: a Worker without Teams or Google
 * Chat never evaluates it (the runtime imports it once; later calls get the same module).
 */
const _jose = () => import("./_jose.ts");

const _BEARER = /^Bearer[ \t]+([A-Za-z0-9_.-]{1,8192})[ \t]*$/i;

/** The token of an `Authorization: Bearer <jwt>` header, or null when there is none of that shape. */
export function bearerToken(headers: Headers): string | null {
  return _BEARER.exec(headers.get("authorization") ?? "")?.[1] ?? null;
}

/** Where a platform publishes its signing keys: a JWKS URL, or OpenID metadata naming one. */
export type KeySource = { jwksUrl: string } | { openIdUrl: string };

interface _KeySet {
  keys: JWK[];
  get: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

// Per isolate: the keys are public and change rarely; one fetch serves every request after it.
const _keySets = new Map<string, Promise<_KeySet | null>>();

function _sourceKey(source: KeySource): string {
  return "jwksUrl" in source ? `jwks ${source.jwksUrl}` : `openid ${source.openIdUrl}`;
}

async function _fetchKeySet(source: KeySource, now: number): Promise<_KeySet | null> {
  let jwksUrl: string;
  if ("jwksUrl" in source) {
    jwksUrl = source.jwksUrl;
  } else {
    const metadata = await readJson(source.openIdUrl, {}, HTTP_OUT_TIMEOUT_MS, CREDENTIAL_WAIT_OUT);
    const uri = jsonField(metadata, "jwks_uri");
    if (typeof uri !== "string" || !/^https?:\/\//i.test(uri)) return null;
    jwksUrl = uri;
  }
  // A 429 (or 503 stating its wait) is waited out once, briefly: the platform awaits our answer.
  const body = await readJson(jwksUrl, {}, HTTP_OUT_TIMEOUT_MS, CREDENTIAL_WAIT_OUT);
  const keys = jsonField(body, "keys");
  if (!Array.isArray(keys)) return null;
  const usable = keys.filter((k): k is JWK => typeof k === "object" && k !== null);
  const { createLocalJWKSet } = await _jose();
  try {
    return {
      keys: usable,
      get: createLocalJWKSet({ keys: usable } as JSONWebKeySet),
      fetchedAt: now,
    };
  } catch {
    return null; // not a key set jose accepts
  }
}

async function _keySet(source: KeySource, now: number, fresh: boolean): Promise<_KeySet | null> {
  const name = _sourceKey(source);
  const cached = await _keySets.get(name);
  const stale = !cached || now - cached.fetchedAt > _KEYS_TTL_MS;
  const refetch = fresh && cached && now - cached.fetchedAt > _REFETCH_MIN_MS;
  if (cached && !stale && !refetch) return cached;
  const pending = _fetchKeySet(source, now);
  _keySets.set(name, pending);
  const got = await pending;
  // A failed fetch is not remembered: the next request tries again (the old keys, if any, stay).
  if (!got) {
    if (cached) _keySets.set(name, Promise.resolve(cached));
    else _keySets.delete(name);
    return cached ?? null;
  }
  return got;
}

/** A verified JWT: its claims, and the key (as published, with any extra members) that signed it. */
export interface VerifiedJwt {
  payload: JWTPayload;
  key: JWK & Record<string, unknown>;
}

/**
 * Verifies `token` against the keys of `source` (fetched and cached; refetched once, rate-limited,
 * for an unknown key id) with jose's `jwtVerify` and `options` (issuer, audience, algorithms;
 * times against `nowSeconds` within ±5 minutes; that clock also ages the cached keys). Returns the
 * verified JWT, a refusal reason that names no token, key or secret, or `Unverifiable` when the
 * keys could not be fetched (not the sender's fault: the platform is asked to deliver it again).
 */
export async function verifyJwt(
  token: string,
  source: KeySource,
  options: JWTVerifyOptions,
  nowSeconds: number,
): Promise<VerifiedJwt | string | Unverifiable> {
  const now = nowSeconds * 1000;
  const verifyOptions: JWTVerifyOptions = {
    clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS,
    currentDate: new Date(nowSeconds * 1000),
    ...options,
  };
  const { errors, jwtVerify } = await _jose();
  for (const fresh of [false, true]) {
    const set = await _keySet(source, now, fresh);
    if (!set) return { unavailable: "could not fetch the platform's signing keys" };
    try {
      const { payload, protectedHeader } = await jwtVerify(token, set.get, verifyOptions);
      const key = set.keys.find((k) => k.kid === protectedHeader.kid) ??
        (set.keys.length === 1 ? set.keys[0] : undefined);
      if (!key) return "the token names no published key";
      return { payload, key: key as VerifiedJwt["key"] };
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey && !fresh) continue;
      return _reason(error, errors);
    }
  }
  return "the token is signed by an unknown key";
}

function _reason(error: unknown, errors: typeof import("jose").errors): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `the token's ${error.claim} claim is not valid (${error.reason})`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "the token's signature does not verify";
  }
  if (error instanceof errors.JWKSNoMatchingKey) return "the token is signed by an unknown key";
  if (error instanceof errors.JWKSMultipleMatchingKeys) return "the token's key is ambiguous";
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not allowed";
  return "the token is malformed";
}

// ── access tokens ───────────────────────────────────────────────────────────────────────────────

interface _Token {
  token: string;
  expiresAt: number;
}

// Per isolate, by endpoint and client: a token serves every send until shortly before it expires.
const _tokens = new Map<string, Promise<_Token | SendResult>>();

/** What an OAuth token endpoint is asked, and how its failures are named. */
export interface TokenRequest {
  /** Cache key: the endpoint and the client id (never a secret). */
  cacheKey: string;
  url: string;
  /** The form to POST (client credentials, or a signed assertion). Made only when needed. */
  form: () => Promise<URLSearchParams>;
  /** How messages name the endpoint: "the <api> answered 401". */
  api: string;
  /** Values that must never reach a message. */
  secrets: readonly string[];
  /** The clock a cached token's expiry is read by (ms since the epoch); `Date.now` by default. */
  now?: () => number;
}

/**
 * An access token from an OAuth token endpoint, cached until 5 minutes before it expires; or the
 * failure as a SendResult — nothing has been posted then, so a 429, a 5xx or a lost connection is
 * retryable, a refusal (bad credentials) final. No message carries a secret or a token. Throws
 * only what `request.form` throws.
 */
export async function accessToken(
  request: TokenRequest,
): Promise<{ ok: true; token: string } | Extract<SendResult, { ok: false }>> {
  const now = (request.now ?? Date.now)();
  const cached = _tokens.get(request.cacheKey);
  if (cached) {
    const got = await cached;
    if ("token" in got && got.expiresAt > now) return { ok: true, token: got.token };
  }
  const pending = _fetchToken(request, now);
  _tokens.set(request.cacheKey, pending);
  let got: _Token | SendResult;
  try {
    got = await pending;
  } catch (error) {
    _tokens.delete(request.cacheKey);
    throw error; // the form could not be made (a key that is not one): the caller words it
  }
  if ("token" in got) return { ok: true, token: got.token };
  _tokens.delete(request.cacheKey); // a failure is never cached
  return got as Extract<SendResult, { ok: false }>;
}

/** Drops a cached access token (the API refused it: revoked, or the credentials changed). */
export function forgetAccessToken(cacheKey: string): void {
  _tokens.delete(cacheKey);
}

async function _fetchToken(request: TokenRequest, now: number): Promise<_Token | SendResult> {
  const form = await request.form(); // throws, outside the fetch's catch, for a bad key
  let res: Response;
  try {
    res = await fetchOut(request.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    }, {
      api: request.api,
      secrets: request.secrets,
      timeoutMs: HTTP_OUT_TIMEOUT_MS,
      // Nothing is posted by asking for a token: a short stated wait is waited out here, once.
      waitOut: CREDENTIAL_WAIT_OUT,
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    // Nothing was posted yet: a token endpoint out of reach is worth another try.
    return { ok: false, status: 0, retryable: true, message: error.message };
  }
  const body = await readJsonAnswer(res);
  const token = jsonField(body, "access_token");
  const expiresIn = Number(jsonField(body, "expires_in") ?? 3600);
  if (res.ok && typeof token === "string" && token !== "") {
    const lifetime = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : 0;
    return { token, expiresAt: now + Math.max(0, lifetime - _TOKEN_MARGIN_MS) };
  }
  // OAuth's `error` is a code such as invalid_client; its description may echo the client: left out.
  const code = jsonField(body, "error");
  const named = typeof code === "string" && /^[a-z_]{1,64}$/.test(code) ? `: ${code}` : "";
  const message = redact(`the ${request.api} answered ${res.status}${named}`, request.secrets);
  const retryable = res.status === 429 || res.status >= 500 || res.ok;
  // A wait too long to wait out here (or a second 429) goes to the caller: a send's outbox waits
  // it out within its own cap, or gives the part up with this message.
  const answer = { status: res.status, headers: res.headers, body };
  const wait = res.status === 429
    ? statedWaitMs(answer, [retryAfterHeader], Date.now())
    : undefined;
  return {
    ok: false,
    status: res.status,
    retryable,
    ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    message,
  };
}

/** Forgets every cached key set and token. For tests. */
export function resetJwtCaches(): void {
  _keySets.clear();
  _tokens.clear();
}

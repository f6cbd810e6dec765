// Google Chat's request verification: Chat's own JWTs for a project-number audience, Google ID tokens (Chat's or a Workspace add-on's service agent) for an endpoint-URL audience; runtime-neutral (fetch, Web Crypto, jose).
import type { PlatformEnv, RawRequest, Unverifiable } from "../chat/mod.ts";
import { bearerToken, JWT_CLOCK_TOLERANCE_SECONDS, verifyJwt } from "./_jwt.ts";

/** The issuer (and, for a URL audience, the ID token's email) of every request Google Chat sends. */
export const GOOGLE_CHAT_ISSUER = "chat@system.gserviceaccount.com";
const _CHAT_JWKS_URL =
  "https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com";
/** Google's OIDC keys: they sign the ID tokens sent when the audience is the endpoint URL. */
const _GOOGLE_OIDC_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs";
const _GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];
/**
 * The email of the ID token a Chat app built as a Google Workspace add-on is called with: its
 * project's add-on service agent, `service-<PROJECT_NUMBER>@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`,
 * for the endpoint URL as audience ("Verify requests from Google Chat",
 * https://developers.google.com/workspace/chat/verify-requests-from-chat: the token is also in the
 * body as `authorizationEventObject.systemIdToken`).
 */
export function googleChatAddOnAgent(projectNumber: string): string {
  return `service-${projectNumber}@gcp-sa-gsuiteaddons.iam.gserviceaccount.com`;
}
/** The longest a request's token may still be valid (google-auth-library's DEFAULT_MAX_TOKEN_LIFETIME_SECS_). */
const _MAX_TOKEN_LIFETIME_SECONDS = 86_400;

function _urlAudience(audience: string): boolean {
  return /^https?:\/\//i.test(audience);
}

/**
 * Google Chat's request verification: with a project-number audience, a JWT issued by
 * `chat@system.gserviceaccount.com` for that number, signed by a key of Chat's JWKS; with an
 * endpoint-URL audience, a Google-signed ID token for that URL whose verified email is Chat's.
 */
export async function verifyGoogleChatRequest(
  request: RawRequest,
  env: PlatformEnv,
): Promise<string | Unverifiable | null> {
  const audience = (env.GOOGLE_CHAT_AUDIENCE ?? "").trim();
  if (!audience) return "GOOGLE_CHAT_AUDIENCE is not set";
  const token = bearerToken(request.headers);
  if (!token) return "missing Authorization: Bearer token";
  const url = _urlAudience(audience);
  const verified = await verifyJwt(
    token,
    { jwksUrl: env.GOOGLE_CHAT_JWKS_URL || (url ? _GOOGLE_OIDC_JWKS_URL : _CHAT_JWKS_URL) },
    { issuer: url ? _GOOGLE_ISSUERS : GOOGLE_CHAT_ISSUER, audience, algorithms: ["RS256"] },
    request.nowSeconds,
  );
  if (typeof verified === "string" || "unavailable" in verified) return verified;
  // As google-auth-library's verifySignedJwtWithCertsAsync (Chat's documented check): iat and exp
  // required, not issued more than the skew ahead, lasting less than a day. Chat's own tokens last
  // an hour; jose alone took a token without them or one valid for a year.
  const { iat, exp } = verified.payload;
  if (typeof iat !== "number" || typeof exp !== "number") return "the token has no iat or exp";
  if (iat > request.nowSeconds + JWT_CLOCK_TOLERANCE_SECONDS) return "the token is issued ahead";
  if (exp >= request.nowSeconds + _MAX_TOKEN_LIFETIME_SECONDS) {
    return "the token lasts longer than a day";
  }
  if (url) {
    // Any Google account can get an ID token for our URL: only Chat's own is Chat — Chat's
    // account for a Chat API app, or, for an app built as a Workspace add-on, the add-on service
    // agent of the project named in GOOGLE_CHAT_ADDON_PROJECT_NUMBER (any other project's agent
    // is another app).
    const { email, email_verified: emailVerified } = verified.payload;
    const agent = googleChatAddOnAgentOf(env);
    if ((email !== GOOGLE_CHAT_ISSUER && email !== agent) || emailVerified !== true) {
      return "the ID token is not Google Chat's";
    }
  }
  return null;
}

/**
 * The add-on service agent whose ID tokens are Chat's, or undefined: only with a URL audience (an
 * add-on's tokens name the endpoint URL) and a project number of digits.
 */
export function googleChatAddOnAgentOf(env: PlatformEnv): string | undefined {
  const project = (env.GOOGLE_CHAT_ADDON_PROJECT_NUMBER ?? "").trim();
  if (!/^[0-9]{1,20}$/.test(project)) return undefined;
  return _urlAudience((env.GOOGLE_CHAT_AUDIENCE ?? "").trim())
    ? googleChatAddOnAgent(project)
    : undefined;
}

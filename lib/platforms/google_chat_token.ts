// The Google Chat app's service-account token (a signed JWT assertion exchanged at Google's OAuth endpoint, cached until it expires) for the Chat API and its media downloads; runtime-neutral (fetch, Web Crypto, jose).
import * as z from "zod";
import type { PlatformEnv, SendResult } from "../chat/mod.ts";
import { accessToken } from "./_jwt.ts";

const _DEFAULT_TOKEN_URL = "https://oauth2.googleapis.com/token";
/** An app's own scope: sending messages and reading the media sent to it. */
const _SCOPE = "https://www.googleapis.com/auth/chat.bot";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
/** The fields of a service-account key JSON baton uses. */
const _serviceAccount = z.lazy(() =>
  z.looseObject({
    client_email: z.string().min(3).max(512),
    private_key: z.string().min(64),
    private_key_id: z.string().max(128).optional(),
  })
);

async function _assertionForm(
  account: z.infer<typeof _serviceAccount>,
  tokenUrl: string,
): Promise<URLSearchParams> {
  // jose on the first token, not at start-up: a Worker without Google Chat never evaluates it.
  const { importPKCS8, SignJWT } = await import("./_jose.ts");
  const key = await importPKCS8(account.private_key, "RS256");
  const assertion = await new SignJWT({ scope: _SCOPE })
    .setProtectedHeader({
      alg: "RS256",
      typ: "JWT",
      ...(account.private_key_id ? { kid: account.private_key_id } : {}),
    })
    .setIssuer(account.client_email)
    .setSubject(account.client_email)
    .setAudience(tokenUrl)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
  return new URLSearchParams({
    grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    assertion,
  });
}

/** The service account of `GOOGLE_CHAT_SERVICE_ACCOUNT`, or null (nothing of it is ever quoted). */
function _account(env: PlatformEnv): z.infer<typeof _serviceAccount> | null {
  try {
    const parsed = _serviceAccount.safeParse(JSON.parse(env.GOOGLE_CHAT_SERVICE_ACCOUNT ?? ""));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The app's access token (`chat.bot` scope) with the values no message may carry (the key, the
 * whole key JSON), or why not — a key JSON that is not one, a key that is not PKCS#8, a refusal —
 * worded without any of them.
 */
export async function googleChatToken(
  env: PlatformEnv,
): Promise<
  { ok: true; token: string; secrets: string[] } | Extract<SendResult, { ok: false }>
> {
  const account = _account(env);
  if (!account) {
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "GOOGLE_CHAT_SERVICE_ACCOUNT is not a service-account key JSON",
    };
  }
  const tokenUrl = env.GOOGLE_CHAT_TOKEN_URL || _DEFAULT_TOKEN_URL;
  const secrets = [account.private_key, env.GOOGLE_CHAT_SERVICE_ACCOUNT ?? ""];
  try {
    const token = await accessToken({
      cacheKey: `google-chat ${tokenUrl} ${account.client_email}`,
      url: tokenUrl,
      api: "Google OAuth token endpoint",
      secrets,
      form: () => _assertionForm(account, tokenUrl),
    });
    return token.ok ? { ...token, secrets } : token;
  } catch {
    // importPKCS8 refuses a key that is not PKCS#8 PEM; its error is not passed on.
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "GOOGLE_CHAT_SERVICE_ACCOUNT's private_key is not a PKCS#8 RSA key",
    };
  }
}

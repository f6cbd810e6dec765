// The Teams bot's own client-credentials token (Microsoft identity platform, cached until it expires) for the Bot Connector and the attachments it serves; runtime-neutral (fetch).
import type { PlatformEnv, SendResult } from "../chat/mod.ts";
import { accessToken } from "./_jwt.ts";

/** What a bot's own token is for: calling the Bot Connector. */
const _SCOPE = "https://api.botframework.com/.default";

function _tokenUrl(env: PlatformEnv): string {
  const tenant = (env.TEAMS_TENANT_ID ?? "").trim() || "botframework.com";
  return env.TEAMS_TOKEN_URL ||
    `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;
}

/**
 * The bot's token (bought with `TEAMS_APP_ID` / `TEAMS_APP_PASSWORD`, fetched once and cached),
 * with the key to `forgetAccessToken` it by when an API refuses it, or why not (no secret named).
 */
export async function teamsBotToken(
  env: PlatformEnv,
): Promise<{ ok: true; token: string; cacheKey: string } | Extract<SendResult, { ok: false }>> {
  const appId = env.TEAMS_APP_ID ?? "";
  const password = env.TEAMS_APP_PASSWORD ?? "";
  const tokenUrl = _tokenUrl(env);
  const cacheKey = `teams ${tokenUrl} ${appId}`;
  const token = await accessToken({
    cacheKey,
    url: tokenUrl,
    api: "Microsoft identity platform",
    secrets: [password],
    form: () =>
      Promise.resolve(
        new URLSearchParams({
          grant_type: "client_credentials",
          client_id: appId,
          client_secret: password,
          scope: _SCOPE,
        }),
      ),
  });
  return token.ok ? { ...token, cacheKey } : token;
}

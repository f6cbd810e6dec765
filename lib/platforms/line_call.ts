// One LINE Messaging API call: a JSON POST under the channel's token, its refusal worded from LINE's `message`, no secret in any message; runtime-neutral (fetch).
import type { PlatformEnv, SendResult } from "../chat/mod.ts";
import { apiRoot, detail, jsonField, type SendOptions, sendRequest } from "./_kit.ts";

const _DEFAULT_API_ROOT = "https://api.line.me";

/**
 * POSTs `payload` as JSON to the Messaging API (`path` under `LINE_API_ROOT`, else api.line.me)
 * with the channel access token; `headers` are added (a push's retry key). `options` go to
 * `sendRequest`: whether a repeat is safe, what a rate limit looks like, how long to wait.
 */
export function lineCall(
  path: string,
  payload: Record<string, unknown>,
  env: PlatformEnv,
  options: Omit<SendOptions, "api" | "secrets">,
  headers: Record<string, string> = {},
): Promise<SendResult> {
  const token = env.LINE_CHANNEL_ACCESS_TOKEN ?? "";
  const root = apiRoot(env, "LINE_API_ROOT", _DEFAULT_API_ROOT);
  return sendRequest(`${root}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(payload),
  }, {
    describe: ({ status, body }) =>
      `the LINE Messaging API answered ${status}${detail(jsonField(body, "message"))}`,
    ...options,
    api: "LINE Messaging API",
    secrets: [token],
  });
}

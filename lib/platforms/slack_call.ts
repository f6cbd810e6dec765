// One Slack Web API call: the bot token, a JSON (or form) payload, `ok: false` read as a refusal, no secret in any message; runtime-neutral (fetch).
import type { PlatformEnv, SendResult } from "../chat/mod.ts";
import { apiRoot, jsonField, type SendOptions, sendRequest } from "./_kit.ts";
import { SLACK_DEFAULT_API_ROOT } from "./slack_target.ts";

const _ERROR_CODE = /^[a-z0-9_]{1,64}$/;

/**
 * Calls Slack Web API `method` with `payload`. Slack answers most failures 200
 * `{"ok": false, "error": "<code>"}`: that is a refusal, worded with the code alone. `leaving`
 * (a reply part's mark), `idempotent` (an edit) and `answered` (to read the new message's `ts`)
 * are passed to `sendRequest`; `refusedWith` hears the code of a refusal (`message_not_found`).
 */
export async function slackCall(
  method: string,
  payload: Record<string, unknown>,
  env: PlatformEnv,
  options: Partial<Pick<SendOptions, "leaving" | "idempotent" | "answered">> & {
    refusedWith?: (code: string) => void;
    /**
     * Send the payload form-encoded (objects and arrays as JSON), as methods that refuse a JSON
     * body want (files.getUploadURLExternal).
     */
    form?: boolean;
  } = {},
): Promise<SendResult> {
  const token = env.SLACK_BOT_TOKEN ?? "";
  let error: string | undefined;
  return await sendRequest(
    `${apiRoot(env, "SLACK_API_ROOT", SLACK_DEFAULT_API_ROOT)}/${method}`,
    {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": options.form
          ? "application/x-www-form-urlencoded"
          : "application/json; charset=utf-8",
      },
      body: options.form ? _form(payload) : JSON.stringify(payload),
    },
    {
      api: "Slack API",
      leaving: options.leaving,
      secrets: [token],
      ...(options.idempotent ? { idempotent: true } : {}),
      ...(options.answered ? { answered: options.answered } : {}),
      refused: ({ body }) => {
        if (jsonField(body, "ok") === true) return false;
        error = _errorCode(jsonField(body, "error"));
        options.refusedWith?.(error);
        return true;
      },
      describe: ({ status }, kind) =>
        kind === "refused"
          ? `Slack ${method} failed: ${error}`
          : `Slack ${method} answered HTTP ${status}`,
    },
  );
}

// Strings and numbers as they are; anything else as JSON (Slack's form fields take JSON arrays).
function _form(payload: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(payload)) {
    form.set(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  return form.toString();
}

// Only a well-formed code is quoted: the field is the API's free text otherwise.
function _errorCode(error: unknown): string {
  return typeof error === "string" && _ERROR_CODE.test(error) ? error : "unknown_error";
}

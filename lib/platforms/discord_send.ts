// A Discord reply part sent through the interaction's webhook: part 0 edits the deferred `@original`, later parts follow up, a question carries its buttons, a file rides as an attachment; runtime-neutral (fetch).
import type { Choice, OutgoingFile, PartSend, PlatformEnv, SendResult } from "../chat/mod.ts";
import { apiRoot, bodyRetryAfter, retryAfterHeader, sendRequest } from "./_kit.ts";
import { discordFileForm } from "./discord_files.ts";

const _API_ROOT = "https://discord.com/api/v10";
const _USER_AGENT = "DiscordBot (baton, 0.1.0)";

/** The field of a Discord reply target a send needs: the interaction's token (valid 15 minutes). */
type _Target = { token: string };

/**
 * Part 0 edits the deferred `@original`, later parts are follow-ups; with `file`, the part is that
 * file as the message's attachment (multipart, `text` its caption). Editing `@original` is
 * idempotent and may be repeated; a follow-up may not.
 */
export async function discordSend(
  target: _Target,
  text: string,
  part: PartSend,
  env: PlatformEnv,
  file?: OutgoingFile,
): Promise<SendResult> {
  const first = part.index === 0;
  // Discord refuses blank content; the deferred placeholder must still be replaced.
  if (!text.trim() && !first && !file) return { ok: true };
  const hook = _hook(target, env);
  const payload = {
    // A file needs no text; a message without either is refused.
    content: text.trim() || file ? text : "(empty reply)",
    allowed_mentions: { parse: [] },
    // An edit of @original without choices also takes away a question's buttons: the reply
    // that replaces the question must not leave them clickable under it.
    ...(part.choices?.length
      ? { components: _components(part.choices) }
      : first
      ? { components: [] }
      : {}),
  };
  return await sendRequest(first ? `${hook}/messages/@original` : hook, {
    method: first ? "PATCH" : "POST",
    // Form data sets its own multipart content type, boundary included.
    ...(file ? { headers: { "user-agent": _USER_AGENT }, body: discordFileForm(payload, file) } : {
      headers: { "content-type": "application/json", "user-agent": _USER_AGENT },
      body: JSON.stringify(payload),
    }),
  }, {
    api: "Discord API",
    leaving: part.leaving,
    // The interaction token is in the URL.
    secrets: [target.token],
    // Editing @original is idempotent, so a lost or failed edit may be repeated; a follow-up may not.
    idempotent: first,
    waitFrom: [bodyRetryAfter, retryAfterHeader],
    describe: ({ status }) => _describe(status),
  });
}

/** An edit of the deferred `@original` message: how a preview grows, and how a stopped one ends. */
export async function discordEditOriginal(
  target: _Target,
  text: string,
  env: PlatformEnv,
): Promise<SendResult> {
  return await sendRequest(`${_hook(target, env)}/messages/@original`, {
    method: "PATCH",
    headers: { "content-type": "application/json", "user-agent": _USER_AGENT },
    body: JSON.stringify({ content: text, allowed_mentions: { parse: [] } }),
  }, {
    api: "Discord API",
    leaving: undefined,
    secrets: [target.token],
    describe: ({ status }) => _describe(status),
  });
}

/** The interaction's webhook: the application's id and the interaction token, under the API root. */
function _hook(target: _Target, env: PlatformEnv): string {
  const root = apiRoot(env, "DISCORD_API_ROOT", _API_ROOT);
  return `${root}/webhooks/${encodeURIComponent(env.DISCORD_APPLICATION_ID ?? "")}/${
    encodeURIComponent(target.token)
  }`;
}

/** The buttons of a question: one action row (Discord holds five buttons to a row). */
function _components(choices: readonly Choice[]) {
  return [{
    type: 1,
    components: choices.slice(0, 5).map((choice) => ({
      type: 2,
      // Styles: 1 primary, 2 secondary, 4 danger.
      style: choice.style === "danger" ? 4 : choice.style === "primary" ? 1 : 2,
      label: choice.label,
      custom_id: choice.data,
    })),
  }];
}

/** A failure worded, with the likely cause of a 401 or 404: the interaction token expired. */
function _describe(status: number): string {
  const hint = status === 401 || status === 404
    ? " (interaction tokens expire 15 minutes after the command)"
    : "";
  return `the Discord API answered ${status}${hint}`;
}

// A Slack reply previewed as it grows: one message posted, edited with chat.update, then edited into the reply's first part; runtime-neutral (fetch).
import type { PartSend, PlatformEnv, PreviewResult, SendResult } from "../chat/mod.ts";
import { jsonField } from "./_kit.ts";
import { slackCall } from "./slack_call.ts";
import type { SlackTarget } from "./slack_target.ts";

/** What a preview shows under the text so far, so that nobody takes it for the finished reply. */
export const SLACK_PREVIEW_MARK = "\n\n_… writing_";

const _TS = /^[0-9]{1,20}\.[0-9]{1,12}$/;

/** Refusals saying the preview message can no longer be edited: the reply is posted instead. */
const _GONE = new Set(["message_not_found", "cant_update_message", "edit_window_closed"]);

/**
 * Shows the reply so far: the first update posts a message in the reply's place (its `ts` is the
 * handle, which the session stores before anything else), later ones edit it. Slack allows about
 * one post a second per channel and chat.update is Tier 3; the live reply's throttle keeps within
 * both, and a 429 ends previews for the turn.
 */
export async function previewSlackReply(
  target: SlackTarget,
  text: string,
  _draft: number,
  env: PlatformEnv,
  handle?: string,
): Promise<PreviewResult> {
  const { channel, thread_ts } = target;
  const shown = text + SLACK_PREVIEW_MARK;
  if (handle) {
    const edited = await slackCall("chat.update", { channel, ts: handle, text: shown }, env, {
      idempotent: true,
    });
    return _previewResult(edited);
  }
  let ts: unknown;
  const posted = await slackCall(
    "chat.postMessage",
    {
      channel,
      text: shown,
      ...(thread_ts ? { thread_ts } : {}),
    },
    env,
    { answered: ({ body }) => ts = jsonField(body, "ts") },
  );
  if (!posted.ok) return _previewResult(posted);
  // Posted but unnamed: it could never be replaced, so no second one is made.
  return typeof ts === "string" && _TS.test(ts) ? { handle: ts } : "unsupported";
}

/**
 * Ends a turn's preview message without a reply: edited to `text` (a stopped turn's notice), or
 * deleted (`text` null: the turn asks a question first, and its reply will follow it).
 */
export async function endSlackPreview(
  target: SlackTarget,
  text: string | null,
  env: PlatformEnv,
  handle?: string,
): Promise<void> {
  if (!handle) return;
  const { channel } = target;
  if (text === null) await slackCall("chat.delete", { channel, ts: handle }, env);
  else await slackCall("chat.update", { channel, ts: handle, text }, env, { idempotent: true });
}

/**
 * Edits the preview message `ts` into a reply part, carrying the part's `metadata` (its marker),
 * so the finished message is the reply and a repeat cannot show twice. Null when the preview is
 * gone (deleted in the chat, no longer editable): the caller posts the part as a new message.
 */
export async function replacePreview(
  target: SlackTarget,
  ts: string,
  text: string,
  metadata: Record<string, unknown>,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult | null> {
  let gone = false;
  const edited = await slackCall(
    "chat.update",
    { channel: target.channel, ts, text, ...metadata },
    env,
    { leaving: part.leaving, idempotent: true, refusedWith: (code) => gone = _GONE.has(code) },
  );
  return gone ? null : edited;
}

function _previewResult(result: SendResult): PreviewResult {
  return result.ok ? "shown" : result.status === 429 ? "rate_limited" : "failed";
}

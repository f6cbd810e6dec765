// Slack files out: a reply part's file through the external upload flow (files.getUploadURLExternal, the upload, files.completeUploadExternal into the channel and thread); runtime-neutral (fetch).
import type { OutgoingFile, PartSend, PlatformEnv, SendResult } from "../chat/mod.ts";
import { jsonField, sendRequest } from "./_kit.ts";
import { slackCall } from "./slack_call.ts";
import type { SlackTarget } from "./slack_target.ts";

/** The longest `initial_comment` sent: the caption of a file, like a message's text. */
const _COMMENT_CHARS = 4000;

/**
 * Sends `file` into the target's channel (and thread) as a Slack file share, `caption` as its
 * comment. Reserving the upload URL and uploading the bytes show nothing in the chat, so a lost
 * answer or a 5xx there is retried freely, and `part.leaving` is called only before
 * `files.completeUploadExternal`, the call that shares the file: a cut-off send is in doubt from
 * there. A file message carries no metadata, so a part in doubt cannot be looked for
 * (`findPart`): it is resent behind the note, or skipped (`REPLY_IN_DOUBT`).
 */
export async function sendSlackFile(
  target: SlackTarget,
  file: OutgoingFile,
  caption: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const filename = file.name ?? "file";
  let upload: { url: string; id: string } | null = null;
  // files.getUploadURLExternal takes form fields only (a JSON body is refused).
  const reserved = await slackCall(
    "files.getUploadURLExternal",
    {
      filename,
      length: file.bytes.length,
    },
    env,
    {
      form: true,
      idempotent: true,
      answered: ({ body }) => {
        const url = jsonField(body, "upload_url");
        const id = jsonField(body, "file_id");
        if (typeof url === "string" && typeof id === "string") upload = { url, id };
      },
    },
  );
  if (!reserved.ok) return reserved;
  const to = upload as { url: string; id: string } | null;
  if (!to || !/^https?:\/\//i.test(to.url)) {
    return {
      ok: false,
      status: 0,
      retryable: false,
      message: "Slack files.getUploadURLExternal answered no upload URL",
    };
  }
  // The upload URL is pre-signed: the bot token is not sent there.
  const uploaded = await sendRequest(to.url, {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: new Uint8Array(file.bytes),
  }, {
    api: "Slack file upload",
    leaving: undefined,
    idempotent: true,
    secrets: [to.url],
    describe: ({ status }) => `the Slack file upload answered ${status}`,
  });
  if (!uploaded.ok) return uploaded;
  return await slackCall(
    "files.completeUploadExternal",
    {
      files: [{ id: to.id, title: filename }],
      channel_id: target.channel,
      ...(target.thread_ts ? { thread_ts: target.thread_ts } : {}),
      ...(caption ? { initial_comment: caption.slice(0, _COMMENT_CHARS) } : {}),
    },
    env,
    { form: true, leaving: part.leaving },
  );
}

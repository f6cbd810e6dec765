// A turn's tool files made links for an OpenAI API reply: signed `/media/{id}` links under PUBLIC_URL, else the request's origin; Workers.
import type { Context } from "hono";
import type { AttachedFile } from "../lib/agent/mod.ts";
import { mediaFileUrl } from "../lib/media/mod.ts";
import type { ReplyFile } from "../lib/openai/mod.ts";
import type { App } from "./_http.ts";

/**
 * `files` as an API caller is given them: name, type, size and a signed link valid a day
 * (`MEDIA_URL_TTL_SECONDS`), under `PUBLIC_URL` when it is an http(s) URL, else under the origin
 * the request came to (the caller reached baton there). The link is null without
 * `MEDIA_URL_SECRET` or the `MEDIA` binding: the file is still named, never its bytes.
 */
export async function replyFiles(
  c: Context<App>,
  files: readonly AttachedFile[] | undefined,
): Promise<ReplyFile[]> {
  if (!files?.length) return [];
  const secret = c.env.MEDIA ? c.var.config.mediaLinks?.secret : undefined;
  const publicUrl = c.var.config.mediaLinks?.publicUrl ?? "";
  const base = /^https?:\/\//i.test(publicUrl) ? publicUrl : new URL(c.req.url).origin;
  const now = Date.now() / 1000;
  return await Promise.all(files.map(async (file) => ({
    name: file.name ?? "file",
    type: file.type,
    size: file.size,
    url: secret ? await mediaFileUrl(base, secret, file.id, now) : null,
  })));
}

// Slack's media: the files of a message event as announced media, and their download from url_private with the bot token, on Slack's hosts only; runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import type { FetchedMedia, PlatformMedia } from "../media/mod.ts";
import { apiRoot } from "./_kit.ts";
import { bareType, downloadFromPlatform, kindOfType } from "./_file_download.ts";
import { SLACK_DEFAULT_API_ROOT } from "./slack_target.ts";

/** Where Slack serves files (`files.slack.com`) and may redirect a download (its file CDNs). */
const _FILE_HOSTS = ["slack.com", "slack-files.com", "slack-edge.com"];
/** How many files of one message are read. */
const _MAX_FILES = 10;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _file = z.lazy(() =>
  z.looseObject({
    id: z.string().max(64).optional(),
    name: z.string().nullish(),
    mimetype: z.string().nullish(),
    size: z.number().int().nonnegative().nullish(),
    url_private: z.string().max(4096).nullish(),
    url_private_download: z.string().max(4096).nullish(),
    /** `slack_audio` for a clip recorded in Slack: a voice note. */
    subtype: z.string().nullish(),
  })
);

const _files = z.lazy(() => z.looseObject({ files: z.array(z.unknown()).max(100).optional() }));

/**
 * The files of a Slack message event (`files[]`, as a `file_share` message or an app mention
 * carries them), as announced (nothing fetched): the download link (`url_private_download`, else
 * `url_private`), the name, the stated type and size; a clip recorded in Slack as a voice note. A
 * file Slack gives no link for (one hidden by the plan's limits, a Slack Connect file not yet
 * readable) is announced with none, so the user hears it was not read. A malformed entry is left
 * out, never a refusal of the message.
 */
export function slackMedia(event: unknown): PlatformMedia[] {
  const parsed = _files.safeParse(event);
  if (!parsed.success) return [];
  const media: PlatformMedia[] = [];
  for (const raw of parsed.data.files?.slice(0, _MAX_FILES) ?? []) {
    const file = _file.safeParse(raw);
    if (!file.success) continue;
    const f = file.data;
    const type = bareType(f.mimetype);
    media.push({
      platform: "slack",
      file: f.url_private_download || f.url_private || "",
      kind: kindOfType(type, f.subtype === "slack_audio"),
      ...(f.name ? { name: f.name.slice(0, 256) } : {}),
      ...(type ? { type } : {}),
      ...(typeof f.size === "number" ? { size: f.size } : {}),
    });
  }
  return media;
}

/**
 * Downloads a Slack file inside the turn: its private link with the bot token as
 * `Authorization: Bearer`, on Slack's hosts only (or `SLACK_API_ROOT`'s), within `maxBytes`.
 * Slack answers a token that may not read the file with its sign-in page (200, HTML): that is a
 * failure naming the missing scope, never a file. The token is in no failure.
 */
export async function fetchSlackMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  const token = env.SLACK_BOT_TOKEN ?? "";
  if (!token) return { ok: false, why: "the bot token is not set up" };
  if (!item.file) return { ok: false, why: "Slack gave no link to the file" };
  const got = await downloadFromPlatform(item.file, {
    api: "Slack file server",
    hosts: _FILE_HOSTS,
    root: apiRoot(env, "SLACK_API_ROOT", SLACK_DEFAULT_API_ROOT),
    headers: { authorization: `Bearer ${token}` },
    maxBytes: options.maxBytes,
    signal: options.signal,
    secrets: [token],
  });
  if (got.ok && item.type !== "text/html" && _isHtmlPage(got.bytes)) {
    return {
      ok: false,
      why:
        "download failed: Slack sent its sign-in page, not the file (the app needs the files:read scope)",
    };
  }
  return got;
}

/** Whether bytes start as an HTML page does (after any whitespace): `<!DOCTYPE html` or `<html`. */
function _isHtmlPage(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 64)).trimStart().toLowerCase();
  return head.startsWith("<!doctype html") || head.startsWith("<html");
}

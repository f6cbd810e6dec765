// Teams' media: a message activity's image and file attachments as announced media (cards and the HTML copy of the message skipped), and their download — with the bot's token where the Bot Connector serves them, without it from a pre-authenticated file link; runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import {
  downloadMedia,
  type FetchedMedia,
  type PlatformMedia,
  type PlatformMediaKind,
} from "../media/mod.ts";
import { forgetAccessToken } from "./_jwt.ts";
import { teamsBotToken } from "./teams_token.ts";

/** A file sent in a personal chat: its `content.downloadUrl` is pre-authenticated. */
const _FILE_INFO = "application/vnd.microsoft.teams.file.download.info";
/** Where a `file` needs the bot's token: the prefix says so (decided at parse time). */
const _BOT = "bot:";
/** The Bot Connector's attachment hosts, beside the activity's own service URL. */
const _BOT_HOST =
  /^(smba\.trafficmanager\.net|[a-z0-9.-]+\.botframework\.com|[a-z0-9.-]+\.asm\.skype\.com)$/i;
// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _URL = z.lazy(() => z.url({ protocol: /^https?$/ }).max(4096));
const _IMAGE_EXT = /^(png|jpe?g|gif|webp)$/i;

const _attachment = z.lazy(() =>
  z.looseObject({
    contentType: z.string().max(256),
    contentUrl: _URL.optional(),
    name: z.string().optional(),
    content: z.unknown().optional(),
  })
);
const _fileInfo = z.lazy(() =>
  z.looseObject({ downloadUrl: _URL, fileType: z.string().max(32).optional() })
);

function _kind(type: string): PlatformMediaKind {
  if (type.startsWith("image/")) return "photo";
  if (type.startsWith("audio/")) return "audio";
  if (type.startsWith("video/")) return "video";
  return "document";
}

/**
 * The media of a message activity's `attachments`, as announced (nothing fetched): inline images
 * and other `contentUrl` attachments (the bot's token goes with one served from the activity's
 * `serviceUrl` or a Bot Connector host, never elsewhere), and files sent in a personal chat
 * (their pre-authenticated `downloadUrl`). Adaptive and hero cards, the message's own `text/html`
 * copy, and anything malformed are left out.
 */
export function teamsMedia(attachments: unknown, serviceUrl: string): PlatformMedia[] {
  if (!Array.isArray(attachments)) return [];
  const service = new URL(serviceUrl).origin;
  const media: PlatformMedia[] = [];
  for (const raw of attachments.slice(0, 10)) {
    const parsed = _attachment.safeParse(raw);
    if (!parsed.success) continue;
    const { contentType, contentUrl, name } = parsed.data;
    const named = name ? { name: name.slice(0, 256) } : {};
    if (contentType === _FILE_INFO) {
      const info = _fileInfo.safeParse(parsed.data.content);
      if (!info.success) continue;
      const image = _IMAGE_EXT.test(info.data.fileType ?? "");
      media.push({
        platform: "teams",
        file: info.data.downloadUrl,
        kind: image ? "photo" : "document",
        ...named,
      });
      continue;
    }
    if (!contentUrl || contentType === "text/html" || contentType.startsWith("application/vnd.")) {
      continue;
    }
    const url = new URL(contentUrl);
    const bot = url.origin === service || (url.protocol === "https:" && _BOT_HOST.test(url.host));
    media.push({
      platform: "teams",
      file: `${bot ? _BOT : ""}${contentUrl}`,
      kind: _kind(contentType),
      ...named,
      ...(contentType.includes("/") ? { type: contentType.slice(0, 128) } : {}),
    });
  }
  return media;
}

/**
 * Downloads a Teams attachment inside the turn: with `Authorization: Bearer <the bot's token>`
 * where parse found the Bot Connector serving it (a 401 drops the cached token), else as it is.
 * At most `maxBytes`; the token never in a failure.
 */
export async function fetchTeamsMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  if (!item.file.startsWith(_BOT)) {
    return await downloadMedia(item.file, {}, { api: "file's server", ...options });
  }
  const token = await teamsBotToken(env);
  if (!token.ok) return { ok: false, why: `download failed: ${token.message}` };
  const got = await downloadMedia(
    item.file.slice(_BOT.length),
    { headers: { authorization: `Bearer ${token.token}` } },
    { api: "Bot Connector", ...options, secrets: [token.token, env.TEAMS_APP_PASSWORD ?? ""] },
  );
  if (!got.ok && / 401$/.test(got.why)) forgetAccessToken(token.cacheKey);
  return got;
}

// Discord's media: a slash command's attachment options as announced media, and their download from Discord's CDN (no credential); runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import type { FetchedMedia, PlatformMedia } from "../media/mod.ts";
import { apiRoot } from "./_kit.ts";
import { bareType, downloadFromPlatform, kindOfType } from "./_file_download.ts";

/** Application command option type ATTACHMENT: its value is an id of `data.resolved.attachments`. */
const _ATTACHMENT_OPTION = 11;
/** How many attachments of one command are read (Discord allows 25 options). */
const _MAX_FILES = 10;
/** Where Discord serves attachments (`cdn.discordapp.com`, `media.discordapp.net`). */
const _FILE_HOSTS = ["discordapp.com", "discordapp.net", "discord.com"];
const _DEFAULT_API_ROOT = "https://discord.com/api/v10";

type _Option = { type: number; value?: unknown; options?: _Option[] };

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _attachment = z.lazy(() =>
  z.looseObject({
    url: z.string().max(4096),
    filename: z.string().optional(),
    content_type: z.string().nullish(),
    size: z.number().int().nonnegative().optional(),
    duration_secs: z.number().nonnegative().optional(),
  })
);

const _data = z.lazy(() =>
  z.looseObject({
    options: z.array(z.unknown()).optional(),
    resolved: z.looseObject({ attachments: z.record(z.string(), z.unknown()).optional() })
      .optional(),
  })
);

/**
 * The files a slash command carries (its ATTACHMENT options, resolved in
 * `data.resolved.attachments`), in the order of the options, as announced (nothing fetched): the
 * CDN link, the file name, the stated type and size. Discord's interactions carry no other
 * uploads. A malformed entry is left out, never a refusal of the command.
 */
export function discordMedia(data: unknown): PlatformMedia[] {
  const parsed = _data.safeParse(data);
  if (!parsed.success) return [];
  const resolved = parsed.data.resolved?.attachments ?? {};
  const media: PlatformMedia[] = [];
  for (
    const id of _attachmentIds(parsed.data.options as _Option[] | undefined).slice(0, _MAX_FILES)
  ) {
    const found = _attachment.safeParse(Object.hasOwn(resolved, id) ? resolved[id] : undefined);
    if (!found.success) continue;
    const a = found.data;
    const type = bareType(a.content_type);
    media.push({
      platform: "discord",
      file: a.url,
      kind: kindOfType(type),
      ...(a.filename ? { name: a.filename.slice(0, 256) } : {}),
      ...(type ? { type } : {}),
      ...(a.size !== undefined ? { size: a.size } : {}),
      ...(a.duration_secs !== undefined ? { seconds: a.duration_secs } : {}),
    });
  }
  return media;
}

/** The ids the ATTACHMENT options name, subcommands' options included, in order. */
function _attachmentIds(options: readonly _Option[] | undefined, depth = 0): string[] {
  if (!Array.isArray(options) || depth > 3) return [];
  return options.flatMap((option) => {
    if (typeof option !== "object" || option === null) return [];
    if (option.type === _ATTACHMENT_OPTION && typeof option.value === "string") {
      return [option.value];
    }
    return _attachmentIds(option.options, depth + 1);
  });
}

/**
 * Downloads a Discord attachment inside the turn: its CDN link (signed by Discord, no credential
 * sent), on Discord's hosts only (or `DISCORD_API_ROOT`'s), within `maxBytes`.
 */
export async function fetchDiscordMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  return await downloadFromPlatform(item.file, {
    api: "Discord CDN",
    hosts: _FILE_HOSTS,
    root: apiRoot(env, "DISCORD_API_ROOT", _DEFAULT_API_ROOT),
    maxBytes: options.maxBytes,
    signal: options.signal,
  });
}

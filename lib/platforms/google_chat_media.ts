// Google Chat's media: a message's `attachment[]` as announced media, and an uploaded attachment's download through the Chat API's media endpoint with the app's service-account token (Drive files named as not read); runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import {
  downloadMedia,
  type FetchedMedia,
  type PlatformMedia,
  type PlatformMediaKind,
} from "../media/mod.ts";
import { apiRoot } from "./_kit.ts";
import { googleChatToken } from "./google_chat_token.ts";

const _DEFAULT_API_ROOT = "https://chat.googleapis.com/v1";
/** A Drive file's `file`: reading it would need the user's Drive access, which the app has not. */
const _DRIVE = "drive:";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _attachment = z.lazy(() =>
  z.looseObject({
    contentName: z.string().optional(),
    contentType: z.string().max(256).optional(),
    source: z.string().optional(),
    attachmentDataRef: z.looseObject({ resourceName: z.string().min(1).max(2048) }).optional(),
    driveDataRef: z.looseObject({ driveFileId: z.string().min(1).max(512) }).optional(),
  })
);

function _kind(type: string): PlatformMediaKind {
  if (type.startsWith("image/")) return "photo";
  if (type.startsWith("audio/")) return "audio";
  if (type.startsWith("video/")) return "video";
  return "document";
}

/**
 * The media of a Chat message's `attachment` list, as announced (nothing fetched): an uploaded
 * file by its `attachmentDataRef.resourceName`, a Drive file by its id (announced so the user
 * hears it is not read, never silence). Malformed entries are left out.
 */
export function googleChatMedia(attachments: unknown): PlatformMedia[] {
  if (!Array.isArray(attachments)) return [];
  return attachments.slice(0, 10).flatMap((raw): PlatformMedia[] => {
    const parsed = _attachment.safeParse(raw);
    if (!parsed.success) return [];
    const a = parsed.data;
    const drive = a.source === "DRIVE_FILE" || !a.attachmentDataRef
      ? a.driveDataRef?.driveFileId
      : undefined;
    const file = drive ? `${_DRIVE}${drive}` : a.attachmentDataRef?.resourceName;
    if (!file) return [];
    const type = a.contentType?.slice(0, 128);
    return [{
      platform: "google-chat",
      file,
      kind: _kind(type ?? ""),
      ...(a.contentName ? { name: a.contentName.slice(0, 256) } : {}),
      ...(type ? { type } : {}),
    }];
  });
}

/**
 * Downloads an uploaded attachment inside the turn: `GET <GOOGLE_CHAT_API_ROOT>/media/
 * {resourceName}?alt=media` with the service account's token (`chat.bot`), at most `maxBytes`;
 * neither the token nor the key in a failure. A Drive file is answered as not read.
 */
export async function fetchGoogleChatMedia(
  item: PlatformMedia,
  env: PlatformEnv,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<FetchedMedia> {
  if (item.file.startsWith(_DRIVE)) return { ok: false, why: "Google Drive files are not read" };
  const token = await googleChatToken(env);
  if (!token.ok) return { ok: false, why: `download failed: ${token.message}` };
  const root = apiRoot(env, "GOOGLE_CHAT_API_ROOT", _DEFAULT_API_ROOT);
  const path = item.file.split("/").map(encodeURIComponent).join("/");
  return await downloadMedia(
    `${root}/media/${path}?alt=media`,
    { headers: { authorization: `Bearer ${token.token}` } },
    { api: "Google Chat media API", ...options, secrets: [token.token, ...token.secrets] },
  );
}

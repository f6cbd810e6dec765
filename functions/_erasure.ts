// Erasure across the Worker's stores: a session (its object, directory row, tenant count, notice throttle) and a chat user (their direct sessions, access record, pairing); Workers.
import { type AccessConfig, senderEntry } from "../lib/access/access_policy.ts";
import { eraseSessionMedia } from "../lib/media/mod.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { accessStub, directoryStub, senderStub } from "./access_client.ts";
import { deleteDirectoryRow, userSessionKeys } from "./_directory.ts";
import { RequestError } from "./_http.ts";
import { apiUserMemoryStub, apiUserOf } from "./_api_user_memory.ts";
import { forgetTenantSession } from "./_tenant_caps.ts";
import { r2MediaStore } from "./r2_media_store.ts";
import type { Env } from "./env.ts";
import { sessionStub } from "./session_client.ts";

/** What erasing one session did. */
export interface SessionErasure {
  /** Something of the session was there (object data, media, directory row) and is gone. */
  erased: boolean;
  /** Its running turn was stopped first. */
  stopped: boolean;
}

/**
 * Erases session `key` everywhere: its object first (the turn stopped, every table and the alarm
 * gone), then its media in `MEDIA` (every object under the session's prefix), its directory row,
 * its API tenant's count of it and its chat's notice throttle.
 * Safe to repeat: a call cut off halfway is finished by the next, which then reports the erasure
 * from what it still found. A store that fails is a 503 to retry.
 */
export async function eraseSessionEverywhere(env: Env, key: string): Promise<SessionErasure> {
  try {
    const { erased, stopped } = await sessionStub(env, key).erase({ session_key: key });
    // After the object: its stopped turn stores nothing more. Also when it held nothing now, so a
    // retry after a failure here still deletes them.
    const media = env.MEDIA ? await eraseSessionMedia(r2MediaStore(env.MEDIA), key) : 0;
    const listed = env.DIRECTORY ? await deleteDirectoryRow(env.DIRECTORY, key) : false;
    await forgetTenantSession(env, key);
    if (!key.startsWith("api")) await accessStub(env, `notice:${key}`).erase();
    const any = erased || listed || media > 0;
    if (any) log.info("session erased", { session_key: key, stopped, media });
    return { erased: any, stopped };
  } catch (error) {
    log.error("session erasure failed", { session_key: key, error: errorText(error) });
    throw new RequestError(503, "the session was not wholly erased; retry", "unavailable");
  }
}

/** What erasing a chat user did (`DELETE /v1/users/{platform:user}`'s answer). */
export interface UserErasure {
  platform: string;
  user: string;
  /** The keys of the user's direct sessions erased now. */
  sessions: string[];
  /** Their access record (pairing state, pending code, turn-quota window, notice times) was there. */
  access_record: boolean;
  /** They were paired through the owner's directory. */
  paired: boolean;
  /** Pairing codes of theirs the directory held (pending, expired or spent). */
  pairing_codes: number;
  /** They are listed in ALLOWED_USERS or ADMIN_USERS, which only the settings can change. */
  listed_in_settings: boolean;
  /**
   * An API user's (`api:<tenant>:<user>`) memory object held something and is gone. A chat user's
   * memory is part of their access record.
   */
  memory?: boolean;
}

/**
 * Erases chat user `sender`: every direct session the directory lists for them, their access
 * record and their pairing; for an API user (`api:<tenant>:<user>`) also their memory object. Group chats they spoke in are shared and stay. Needs the directory
 * (a 503 without it: erasing fewer sessions than the user has must not look like success).
 */
export async function eraseChatUser(
  env: Env,
  access: AccessConfig,
  sender: { platform: string; user: string },
): Promise<UserErasure> {
  // An API user's memory lives in an object of its own (lib/access/memory_owner.ts).
  const api = sender.platform === "api" ? apiUserOf(sender.user) : null;
  const db = env.DIRECTORY;
  if (!db) {
    throw new RequestError(
      503,
      "the session directory is not configured, so a user's sessions cannot be found: add the " +
        "DIRECTORY D1 binding (see docs/guides/session-directory.md)",
      "not_configured",
    );
  }
  let keys: string[];
  try {
    keys = await userSessionKeys(db, sender);
  } catch (error) {
    log.error("directory not read", { error: errorText(error) });
    throw new RequestError(503, "the session directory is unavailable; retry", "unavailable");
  }
  const sessions: string[] = [];
  for (const key of keys) {
    if ((await eraseSessionEverywhere(env, key)).erased) sessions.push(key);
  }
  try {
    const record = await senderStub(env, sender).erase();
    const { paired, codes } = await directoryStub(env).eraseSender(sender.platform, sender.user);
    const memory = api
      ? { memory: await apiUserMemoryStub(env, api.tenant, api.user).erase() }
      : {};
    log.info("chat user erased", { platform: sender.platform, sessions: sessions.length });
    return {
      ...sender,
      sessions,
      access_record: record,
      paired,
      pairing_codes: codes,
      listed_in_settings: access.allowed.has(senderEntry(sender)),
      ...memory,
    };
  } catch (error) {
    log.error("access record erasure failed", { error: errorText(error) });
    throw new RequestError(503, "the user's access record was not erased; retry", "unavailable");
  }
}

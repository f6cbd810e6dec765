// Erasing a session's media: every object under its key prefix deleted from the media store; runtime-neutral.
import { mediaPrefix } from "./media_ref.ts";
import type { MediaStore } from "./media_store.ts";

/**
 * Deletes every medium of session `scope` from `store`: listed by the session's prefix
 * (`mediaPrefix`), so media the transcript no longer names (an earlier conversation's, a tool's
 * file, an API request's image whose message was refused) go too. Safe to repeat; a store error
 * is thrown for the caller to retry. Returns how many objects were deleted; a store without
 * `list` deletes none.
 */
export async function eraseSessionMedia(store: MediaStore, scope: string): Promise<number> {
  if (!store.list) return 0;
  const keys = await store.list(await mediaPrefix(scope));
  for (const key of keys) await store.delete(key);
  return keys.length;
}

// The media a transcript message shows in a snapshot (GET /v1/sessions/{key}): a user message's images and files, a tool's files; references only, no bytes; any runtime (the browser console shares the type).

/**
 * A medium as a snapshot lists it: a stored one by its id in the `MEDIA` store (the console reads
 * its bytes at `GET /v1/sessions/{key}/media/{id}`), or an image a request linked by URL, never stored.
 */
export type SnapshotMedium =
  | { id: string; type: string; size: number; name?: string }
  | { url: string; name?: string };

/**
 * The media of a stored message: a user message's `media` and a tool message's `files` (both
 * baton's own fields), each cut to what a reader needs (a description stays out: it is the
 * message's text to the model, and may be long). [] when none, or when the fields are malformed.
 */
export function snapshotMedia(message: unknown): SnapshotMedium[] {
  if (!message || typeof message !== "object") return [];
  const { media, files } = message as { media?: unknown; files?: unknown };
  const items = [...(Array.isArray(media) ? media : []), ...(Array.isArray(files) ? files : [])];
  return items.flatMap((item): SnapshotMedium[] => {
    if (!item || typeof item !== "object") return [];
    const { id, type, size, name, url } = item as Record<string, unknown>;
    const named = typeof name === "string" ? { name } : {};
    if (typeof id === "string" && typeof type === "string" && typeof size === "number") {
      return [{ id, type, size, ...named }];
    }
    // A request's https image link; a part not yet stored (`path`) is never kept.
    if (typeof url === "string" && /^https:\/\//i.test(url)) return [{ url, ...named }];
    return [];
  });
}

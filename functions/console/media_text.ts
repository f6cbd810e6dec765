// How the console words a medium: its size, and the placeholder shown where it cannot be (gone, a link); browser and Deno.
import type { SnapshotMedium } from "../../lib/session/snapshot_media.ts";

/** A size in bytes as "68 B", "2.0 kB" or "1.5 MB" (as the model's placeholders say it). */
export function sizeText(bytes: number): string {
  if (bytes < 1_000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1_000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** Whether the console shows `medium` inline as an image (the types the Worker stores as images). */
export function isImage(medium: SnapshotMedium): boolean {
  return "id" in medium && /^image\/(png|jpeg|gif|webp)$/.test(medium.type);
}

/**
 * What stands for `medium` where it is not shown (lib/media/model_view.ts `placeholder`, without a
 * description): `[image: cat.png, 68 B]`, `[file: report.pdf, 2.0 kB]`, `[image: <link>]`.
 */
export function mediumPlaceholder(medium: SnapshotMedium): string {
  if (!("id" in medium)) return `[image: ${medium.name ?? medium.url}]`;
  const kind = isImage(medium) ? "image" : "file";
  return `[${kind}: ${medium.name ?? medium.type}, ${sizeText(medium.size)}]`;
}

/** The API path of a stored medium's bytes in session `key` (read with the key as a header). */
export function mediumPath(key: string, id: string): string {
  return `/v1/sessions/${encodeURIComponent(key)}/media/${id}`;
}

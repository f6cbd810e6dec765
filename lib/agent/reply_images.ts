// Images in the model's own reply (Chat Completions `image_url` content parts, OpenRouter-style `message.images`): read out as files, stored like a tool's and sent with the reply, the text kept; any runtime.
import type { AttachedFile, ToolFile, ToolFileStore } from "./tool_files.ts";
import { log } from "../runtime/mod.ts";

/** Image parts read from one reply at most: the store refuses more than it sends by name anyway. */
const _MAX_READ = 32;

/** File name extensions of the image types a data URL names. */
const _EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/jpg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/**
 * A reply message's text and images: `content` as a string, or its text parts joined (an
 * `image_url` part, `{ type: "image_url", image_url: { url } | url }`, is an image); and the
 * `image_url` items of `message.images` (OpenRouter's image output), or of `streamed` — the
 * `delta.images` of a streamed reply, which the `openai` package does not gather. Each image is a
 * `ToolFile` named `image-N` (with the extension a data URL's type names): a `data:` URL as its
 * `data`, any other URL as its `url` (the store fetches https only). Markdown `![alt](url)` in the
 * text stays text. Repeated URLs count once.
 */
export function replyImages(
  message: { content?: unknown; images?: unknown },
  streamed: readonly unknown[] = [],
): { text: string; images: ToolFile[] } {
  const urls: string[] = [];
  let text = "";
  const { content } = message;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (!part || typeof part !== "object") continue;
      if (typeof part.text === "string" && part.type !== "image_url") text += part.text;
      else _collect(part, urls);
    }
  }
  const images = Array.isArray(message.images) ? message.images : [];
  for (const part of streamed.length ? streamed : images) _collect(part, urls);
  const unique = [...new Set(urls)].slice(0, _MAX_READ);
  return { text, images: unique.map(_toFile) };
}

/** Adds the URL of an `image_url` part (its `image_url.url`, or `image_url` as a string). */
function _collect(part: unknown, urls: string[]): void {
  if (!part || typeof part !== "object") return;
  const { type, image_url: image } = part as { type?: unknown; image_url?: unknown };
  if (type !== undefined && type !== "image_url") return;
  const url = typeof image === "string"
    ? image
    : image && typeof image === "object" && "url" in image
    ? (image as { url?: unknown }).url
    : undefined;
  if (typeof url === "string" && url) urls.push(url);
}

function _toFile(url: string, i: number): ToolFile {
  const name = `image-${i + 1}`;
  if (!url.startsWith("data:")) return { name, url };
  const type = /^data:([^;,]*)/.exec(url)?.[1]?.toLowerCase() ?? "";
  const ext = _EXTENSIONS[type];
  return { name: ext ? `${name}.${ext}` : name, data: url };
}

/** What the user is told, after the reply's text, of images that could not be sent. */
export const IMAGES_NOT_SENT = "(An image of this reply could not be sent: ";

/**
 * The final assistant message of a turn whose reply carries `images`: stored through the turn's
 * `ToolFileStore` (the same checks as a tool's files: `MEDIA_MAX_BYTES`, typed by content, at most
 * `MAX_FILES_PER_RESULT`) and kept on the message's `files`, so they go out with the reply exactly
 * once, before its text. An image that could not be stored (or every one, without a store) is
 * named after the text with why — the user is never left with a reply that silently lost its
 * picture, nor with an empty one. Rejects only when `signal` aborts.
 */
export async function replyWithImages(
  text: string,
  images: readonly ToolFile[] | undefined,
  store: ToolFileStore | undefined,
  signal: AbortSignal,
): Promise<{ content: string; files: AttachedFile[] }> {
  if (!images?.length) return { content: text, files: [] };
  const { stored, refused } = store
    ? await store(images, signal)
    : { stored: [], refused: images.map((f) => `${f.name}: images cannot be sent from here`) };
  if (!refused.length) return { content: text, files: stored };
  log.warn("reply images not sent", { refused: refused.length, sent: stored.length });
  const note = `${IMAGES_NOT_SENT}${refused.join("; ")}.)`;
  return { content: text ? `${text}\n\n${note}` : note, files: stored };
}

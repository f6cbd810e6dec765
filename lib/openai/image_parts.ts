// The image parts of an OpenAI request's message (Chat Completions `image_url`, Responses `input_image`), each with the path an error names; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import { type MediaPart, withMessageMedia } from "../media/mod.ts";

/**
 * The `image_url` parts of Chat Completions message `index`'s content (`{type:"image_url",
 * image_url:{url}}`, or a bare string `image_url` as some clients send), in order. A part without
 * a URL keeps an empty one: refused when checked, naming its path.
 */
export function chatImageParts(content: unknown, index: number): MediaPart[] {
  return _parts(content, `messages[${index}]`, "image_url", (part) => {
    const image = part.image_url;
    if (typeof image === "string") return image;
    const url = (image as { url?: unknown } | null)?.url;
    return typeof url === "string" ? url : "";
  });
}

/**
 * The `input_image` parts of Responses input item `index`'s content (`image_url`: a data URL or
 * an https URL; a `file_id` keeps an empty URL: refused when checked, files are not kept here).
 */
export function responseImageParts(content: unknown, index: number): MediaPart[] {
  return _parts(content, `input[${index}]`, "input_image", (part) => {
    const url = part.image_url;
    return typeof url === "string" ? url : "";
  });
}

/** `message` with `parts` as its media, when it has any. */
export function withImageParts(message: ChatMessage, parts: MediaPart[]): ChatMessage {
  return parts.length ? withMessageMedia(message, parts) : message;
}

function _parts(
  content: unknown,
  at: string,
  type: string,
  urlOf: (part: Record<string, unknown>) => string,
): MediaPart[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part, j) =>
    part && typeof part === "object" && (part as { type?: unknown }).type === type
      ? [{ path: `${at}.content[${j}]`, url: urlOf(part as Record<string, unknown>) }]
      : []
  );
}

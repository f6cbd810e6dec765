// The media parts of an OpenAI request's message — images, Chat Completions `input_audio` and `file`, Responses `input_file` — each with the path an error names; runtime-neutral.
import type { MediaPart } from "../media/mod.ts";
import { chatImageParts, responseImageParts } from "./image_parts.ts";

/**
 * Chat Completions message `index`'s media parts in order: `image_url` images, `input_audio`
 * (`{data, format}`: base64 audio, made a `data:audio/<format>;base64,` URL) and `file`
 * (`{file_data, filename}`). A part without data keeps an empty URL: refused when checked,
 * naming its path.
 */
export function chatMediaParts(content: unknown, index: number): MediaPart[] {
  const at = `messages[${index}]`;
  const others = _parts(content, at, (part): MediaPart | null => {
    if (part.type === "input_audio") {
      const audio = _object(part.input_audio);
      const data = typeof audio.data === "string" ? audio.data : "";
      const format = typeof audio.format === "string" ? audio.format.toLowerCase() : "";
      const url = data && /^[a-z0-9]{1,16}$/.test(format)
        ? `data:audio/${format};base64,${data}`
        : "";
      return { path: "", url, kind: "audio" };
    }
    if (part.type === "file") return _file(_object(part.file));
    return null;
  });
  return _inOrder([...chatImageParts(content, index), ...others]);
}

/**
 * Responses input item `index`'s media parts in order: `input_image` images and `input_file`
 * (`file_data`: a data URL or bare base64; `filename`). A `file_id` or `file_url` keeps an
 * empty URL: refused when checked, files are not fetched or kept by id here.
 */
export function responseMediaParts(content: unknown, index: number): MediaPart[] {
  const others = _parts(
    content,
    `input[${index}]`,
    (part) => part.type === "input_file" ? _file(part) : null,
  );
  return _inOrder([...responseImageParts(content, index), ...others]);
}

/** A file part's data as a data URL (bare base64 gets a neutral type: the bytes decide), its name. */
function _file(file: Record<string, unknown>): MediaPart {
  const data = typeof file.file_data === "string" ? file.file_data : "";
  const url = !data || data.startsWith("data:")
    ? data
    : `data:application/octet-stream;base64,${data}`;
  const name = typeof file.filename === "string" && file.filename ? { name: file.filename } : {};
  return { path: "", url, kind: "file", ...name };
}

function _object(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" ? value as Record<string, unknown> : {};
}

function _parts(
  content: unknown,
  at: string,
  of: (part: Record<string, unknown>) => MediaPart | null,
): MediaPart[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part, j) => {
    const found = part && typeof part === "object" ? of(part as Record<string, unknown>) : null;
    return found ? [{ ...found, path: `${at}.content[${j}]` }] : [];
  });
}

/** Parts by their place in the message (`…content[j]`). */
function _inOrder(parts: MediaPart[]): MediaPart[] {
  const place = (p: MediaPart) => Number(/\[(\d+)\]$/.exec(p.path)?.[1] ?? 0);
  return parts.sort((a, b) => place(a) - place(b));
}

// Files a tool returns (`{ files: [{ name, type, data | url }] }`): taken out of its result, stored by the host, kept on the tool message, never shown to the model as bytes; any runtime.
import type { ChatMessage } from "./chat_message.ts";

/** A file as a tool returns it: `data` base64 (or a `data:` URL), or an https `url` fetched once. */
export interface ToolFile {
  name: string;
  /** The type the tool states; the stored type is decided by the bytes. */
  type?: string;
  data?: string;
  url?: string;
}

/** A stored file as the tool message keeps it (lib/media's `MediaRef`: the bytes are in `MEDIA`). */
export interface AttachedFile {
  id: string;
  type: string;
  size: number;
  name?: string;
}

/**
 * Stores a tool's files inside its turn (the host's `MEDIA` store, typed by content, within
 * `MEDIA_MAX_BYTES`): what was stored, and a reason for each file that was not (naming the file,
 * never its bytes or URL's secrets). Rejects only when `signal` aborts.
 */
export type ToolFileStore = (
  files: readonly ToolFile[],
  signal: AbortSignal,
) => Promise<{ stored: AttachedFile[]; refused: string[] }>;

/** What the model is told about files sent with the reply: it must not describe or resend them. */
export const FILES_ATTACHED_NOTE =
  "these files are sent to the user with your reply; do not repeat their contents";

/**
 * The files of a tool's result, or null when it carries none: an object whose `files` is a
 * non-empty array of objects each with a `name` and a string `data` or `url` (any other `files`
 * field, e.g. a list of names, is an ordinary result).
 */
export function toolResultFiles(
  result: unknown,
): { files: ToolFile[]; rest: Record<string, unknown> } | null {
  if (!result || typeof result !== "object" || Array.isArray(result)) return null;
  const { files, ...rest } = result as Record<string, unknown>;
  if (!Array.isArray(files) || files.length === 0) return null;
  const ok = files.every((file) =>
    file && typeof file === "object" && typeof file.name === "string" &&
    (typeof file.data === "string" || typeof file.url === "string")
  );
  return ok ? { files: files as ToolFile[], rest } : null;
}

/**
 * A tool result with files made what the model sees and what the turn keeps: the result without
 * its files plus `files_attached` (name, type, size of each stored one) and `files_not_sent`
 * (why each other one was not), and the stored files. Without a store (a delegated sub-turn, a
 * deployment without `MEDIA`), every file is refused: the bytes never reach the model.
 */
export async function storeToolFiles(
  found: { files: ToolFile[]; rest: Record<string, unknown> },
  store: ToolFileStore | undefined,
  signal: AbortSignal,
): Promise<{ content: string; files: AttachedFile[] }> {
  const { stored, refused } = store
    ? await store(found.files, signal)
    : { stored: [], refused: found.files.map((f) => `${f.name}: files cannot be sent from here`) };
  const content = {
    ...found.rest,
    ...(stored.length
      ? {
        files_attached: stored.map((f) => `${f.name ?? "file"} (${f.type}, ${f.size} bytes)`),
        note: FILES_ATTACHED_NOTE,
      }
      : {}),
    ...(refused.length ? { files_not_sent: refused } : {}),
  };
  return { content: JSON.stringify(content), files: stored };
}

/**
 * The files a tool message keeps, or an assistant message (the images of the model's own reply,
 * reply_images.ts): its `files` field, baton's own; [] when none.
 */
export function messageFiles(message: ChatMessage): AttachedFile[] {
  const files = (message as { files?: unknown }).files;
  const keeps = message.role === "tool" || message.role === "assistant";
  return keeps && Array.isArray(files) ? files as AttachedFile[] : [];
}

/**
 * The files of a turn's messages, in the order the tools returned them, then the reply's own
 * images: sent with its reply.
 */
export function turnFiles(messages: readonly ChatMessage[]): AttachedFile[] {
  return messages.flatMap(messageFiles);
}

/** `messages` without baton's `files` field (tool and assistant messages): the model is sent the wire shape only. */
export function withoutToolFiles(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => "files" in m)) return messages;
  return messages.map((message) => {
    if (!("files" in message)) return message;
    const { files: _files, ...rest } = message as ChatMessage & { files?: unknown };
    return rest as ChatMessage;
  });
}

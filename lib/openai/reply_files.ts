// A turn's tool files as the OpenAI APIs return them: Chat Completions' `message.files` and the Responses API's `output_file` items, each a link (signed by the host); runtime-neutral.
import { outputMessageId } from "./response_object.ts";

/**
 * A file of a turn's reply as an API caller is given it (`choices[0].message.files[i]`): its name,
 * its type (decided by its bytes), its size in bytes, and a signed, expiring link to the bytes —
 * null when the deployment makes no links (no `MEDIA_URL_SECRET`).
 */
export interface ReplyFile {
  name: string;
  type: string;
  size: number;
  url: string | null;
}

/**
 * The Responses API's output items for a reply's files, one each, before its message (as chat
 * platforms send them): `{ id, type: "output_file", status: "completed", filename, mime_type,
 * size, file_url }` — the names of the API's own `input_file`, so a client that reads one can
 * read the other. An item type the `openai` package does not know is passed over by its
 * `output_text`.
 */
export function outputFileItems(responseId: string, files: readonly ReplyFile[]) {
  return files.map((file, i) => ({
    id: `${outputMessageId(responseId)}_file${i}`,
    type: "output_file" as const,
    status: "completed" as const,
    filename: file.name,
    mime_type: file.type,
    size: file.size,
    file_url: file.url,
  }));
}

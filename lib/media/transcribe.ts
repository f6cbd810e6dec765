// Speech to text through an OpenAI-compatible `/audio/transcriptions` endpoint (multipart upload, fetchOut's deadline, the key never in an error); runtime-neutral (fetch, FormData).
import { fetchOut, readJsonAnswer } from "../runtime/mod.ts";
import type { FetchFn } from "../runtime/http_out.ts";

/** Where voice is transcribed (`TRANSCRIBE_BASE_URL`, `TRANSCRIBE_MODEL`, `TRANSCRIBE_API_KEY` else `LLM_API_KEY`). */
export interface TranscribeSettings {
  /** The endpoint's base, e.g. `https://api.openai.com/v1`: `/audio/transcriptions` is added. */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token; "" sends none. */
  apiKey: string;
}

/** Turns a recording into its words; rejects when the service cannot (never with the key in the error). */
export type Transcriber = (
  audio: { bytes: Uint8Array; type: string },
  signal?: AbortSignal,
) => Promise<string>;

/**
 * How long one transcription may take, answer included: longer than a platform call, as a long
 * voice note takes the service a while; a turn's own timeout and `/stop` still bound it.
 */
export const TRANSCRIBE_TIMEOUT_MS = 120_000;

/** The file name the upload carries: the services pick the decoder by its extension. */
const _EXTENSIONS: Readonly<Record<string, string>> = {
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/mp4": "m4a",
  "video/mp4": "mp4",
  "audio/webm": "webm",
  "audio/flac": "flac",
};

/**
 * A `Transcriber` posting to `<baseUrl>/audio/transcriptions` as OpenAI's API takes it: multipart
 * `file` (named by its type, e.g. `audio.ogg`), `model`, `response_format=json`; the answer's
 * `text` is the transcript. A failure says the status or that the service could not be reached,
 * never the URL's secrets or the key.
 */
export function openAITranscriber(
  settings: TranscribeSettings,
  options: { fetch?: FetchFn; timeoutMs?: number } = {},
): Transcriber {
  const url = `${settings.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`;
  return async ({ bytes, type }, signal) => {
    const form = new FormData();
    const name = `audio.${_EXTENSIONS[type] ?? "bin"}`;
    form.append("file", new Blob([bytes.slice()], { type }), name);
    form.append("model", settings.model);
    form.append("response_format", "json");
    const headers: Record<string, string> = settings.apiKey
      ? { authorization: `Bearer ${settings.apiKey}` }
      : {};
    const res = await fetchOut(url, { method: "POST", body: form, headers, signal }, {
      api: "transcription service",
      secrets: [settings.apiKey],
      timeoutMs: options.timeoutMs ?? TRANSCRIBE_TIMEOUT_MS,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const answer = await readJsonAnswer(res);
    if (!res.ok) throw new Error(`the transcription service answered ${res.status}`);
    const text = (answer as { text?: unknown } | undefined)?.text;
    if (typeof text !== "string") throw new Error("the transcription service sent no text");
    return text.trim();
  };
}

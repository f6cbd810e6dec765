// The text that stands for a voice note, a recording or a document (a labelled transcript, the document's text cut to a budget), or why it cannot be read; runtime-neutral.
import { errorText } from "../runtime/mod.ts";
import { audioDuration, formatDuration } from "./audio_duration.ts";
import { type PdfjsLoader, pdfText } from "./pdf_text.ts";
import type { MediaSettings } from "./media_settings.ts";
import type { Transcriber } from "./transcribe.ts";

/** A medium as text for the model, or why it could not be read (said to the user; never thrown). */
export type MediaText = { ok: true; text: string } | { ok: false; reason: string };

/** What deriving text needs. */
export interface MediaTextOptions {
  /** The file's name as it came (labels a document or an audio file; a voice note has none). */
  name?: string;
  /** `MEDIA_TEXT_MAX_CHARS`: a document's text past this is cut, with a note saying so. */
  maxChars: number;
  /** How voice becomes words; absent or null: voice is refused (`NOT_TRANSCRIBED`). */
  transcribe?: Transcriber | null;
  /**
   * How the deployment loads pdf.js (`MediaSettings.pdf`, from `defineBaton({ pdf })`); absent
   * or null: a PDF is refused (`PDF_NOT_READ`).
   */
  pdf?: PdfjsLoader | null;
  /** The turn's signal: a stopped turn stops its transcription (its reason is thrown). */
  signal?: AbortSignal;
}

/** The refusal of voice on a deployment without `TRANSCRIBE_BASE_URL`. */
export const NOT_TRANSCRIBED = "voice notes are not transcribed on this deployment";

/** Recordings sent for transcription (the types `sniffMediaType` gives, and common declared ones). */
export const AUDIO_TYPES: ReadonlySet<string> = new Set([
  "audio/ogg",
  "audio/mpeg",
  "audio/wav",
  "audio/mp4",
  "video/mp4",
  "audio/webm",
  "audio/flac",
]);

/** Documents read as UTF-8 text (`sniffMediaType` calls them all `text/plain`). */
export const TEXT_TYPES: ReadonlySet<string> = new Set([
  "text/plain",
  "text/markdown",
  "text/csv",
  "application/json",
]);

/**
 * The refusal of a PDF on a deployment that did not opt in to pdf.js (`defineBaton({ pdf })`):
 * start-up compiles every module uploaded, so pdf.js is left out of Workers that do not ask for it.
 */
export const PDF_NOT_READ = "PDFs are not read on this deployment";

/** What the refusal of an unread type says is read: PDFs only where the deployment reads them. */
export function readTypes(readsPdf: boolean): string {
  return readsPdf
    ? "text, Markdown, CSV, JSON and PDF documents and voice messages are read"
    : "text, Markdown, CSV and JSON documents and voice messages are read";
}

/** What the deployment reads beyond plain text: voice, PDFs (`mediaTextRefusal`). */
export interface MediaReading {
  /** The deployment has a transcription endpoint (or the Workers AI road): voice is read. */
  transcribes: boolean;
  /** The deployment gave pdf.js (`defineBaton({ pdf })`): PDFs are read. */
  readsPdf: boolean;
}

/** What a deployment with media `settings` reads (`mediaTextRefusal`). */
export function mediaReading(settings: Pick<MediaSettings, "transcribe" | "pdf">): MediaReading {
  return { transcribes: settings.transcribe !== null, readsPdf: settings.pdf !== null };
}

/**
 * Why a medium of `type` will not be read as text, or null when it will be tried: known before
 * any byte is read, so a request can be refused with a 400 naming the part. Voice needs
 * `transcribes`; a PDF needs `readsPdf`, else it is refused with `PDF_NOT_READ`.
 */
export function mediaTextRefusal(type: string, reading: MediaReading): string | null {
  if (AUDIO_TYPES.has(type)) return reading.transcribes ? null : NOT_TRANSCRIBED;
  if (type === "application/pdf") return reading.readsPdf ? null : PDF_NOT_READ;
  if (TEXT_TYPES.has(type)) return null;
  return `${type || "a file of unknown type"} is not read: ${readTypes(reading.readsPdf)}`;
}

/**
 * The text that stands for `bytes` of `type` in the conversation:
 * - a recording: its transcript, labelled `[voice message, 0:42] …` (`[audio <name>, …]` for a
 *   named file, `[video message, …]` for MP4), the length where the container gives it;
 * - a document: `[document: <name>]` then its text (UTF-8 text, Markdown, CSV, JSON as they
 *   are; a PDF's text layer through pdf.js where the deployment gave it), cut at `maxChars`
 *   with a note saying so;
 * - anything else: refused, the reason naming the type.
 * Bad input (corrupt, not UTF-8, a failed transcription) is a refusal, never an error; only the
 * turn's own abort is thrown, so a stopped turn stops here.
 */
export async function deriveMediaText(
  bytes: Uint8Array,
  type: string,
  options: MediaTextOptions,
): Promise<MediaText> {
  const refused = mediaTextRefusal(type, {
    transcribes: Boolean(options.transcribe),
    readsPdf: Boolean(options.pdf),
  });
  if (refused) return { ok: false, reason: refused };
  try {
    if (AUDIO_TYPES.has(type)) return await _transcribed(bytes, type, options);
    return type === "application/pdf"
      ? await _pdf(bytes, options.pdf!, options)
      : _text(bytes, options);
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    const what = AUDIO_TYPES.has(type)
      ? "the recording could not be transcribed"
      : type === "application/pdf"
      ? "the PDF could not be read"
      : "the document could not be read";
    return { ok: false, reason: `${what} (${errorText(error).slice(0, 200)})` };
  }
}

async function _transcribed(
  bytes: Uint8Array,
  type: string,
  options: MediaTextOptions,
): Promise<MediaText> {
  const seconds = audioDuration(bytes, type);
  const what = options.name
    ? `audio ${options.name}`
    : type === "video/mp4"
    ? "video message"
    : "voice message";
  const label = `[${what}${seconds === null ? "" : `, ${formatDuration(seconds)}`}]`;
  const words = await options.transcribe!({ bytes, type }, options.signal);
  return { ok: true, text: `${label} ${words || "(no speech heard)"}` };
}

async function _pdf(
  bytes: Uint8Array,
  loader: PdfjsLoader,
  options: MediaTextOptions,
): Promise<MediaText> {
  const { text, pages } = await pdfText(bytes, loader);
  const about = `PDF, ${pages} page${pages === 1 ? "" : "s"}`;
  const label = `[document: ${options.name ? `${options.name} (${about})` : about}]`;
  if (!text) return { ok: true, text: `${label} (no text found: it may be scanned images)` };
  return { ok: true, text: `${label}\n${_cut(text, options.maxChars)}` };
}

function _text(bytes: Uint8Array, options: MediaTextOptions): MediaText {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, reason: "the document is not UTF-8 text" };
  }
  const label = `[document: ${options.name ?? "text"}]`;
  return { ok: true, text: `${label}\n${_cut(text, options.maxChars)}` };
}

/** `text` within `max` characters; a cut one ends with a note saying how much was left out. */
function _cut(text: string, max: number): string {
  if (text.length <= max) return text;
  // A cut between the halves of a surrogate pair would leave half a character.
  const end = /[\ud800-\udbff]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return `${text.slice(0, end)}\n[cut: the document has ${text.length} characters; ` +
    `the first ${max} are here (MEDIA_TEXT_MAX_CHARS)]`;
}

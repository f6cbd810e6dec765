// The media settings a deployment runs with (MEDIA_MAX_BYTES, MEDIA_IMAGES_IN_CONTEXT, VISION, MEDIA_TEXT_MAX_CHARS, MEDIA_DOWNLOAD_TIMEOUT_MS, TRANSCRIBE_*, and its code's pdf.js loader); runtime-neutral.
import type { PdfjsLoader } from "./pdf_text.ts";
import type { TranscribeSettings } from "./transcribe.ts";
import type { WorkersAiTranscribeSettings } from "./workers_ai_transcriber.ts";

/**
 * How images reach the model: `native` as image parts, `describe` as the words a vision model
 * (`VISION_MODEL`) found for each, once; `off` refused where they arrive.
 */
export type VisionMode = "native" | "describe" | "off";

/** The media settings (read by lib/deployment/config.ts from the settings table). */
export interface MediaSettings {
  /** The largest medium accepted, in bytes (`MEDIA_MAX_BYTES`, default 20 MB). */
  maxBytes: number;
  /** How many of a conversation's newest images go to the model as images (`MEDIA_IMAGES_IN_CONTEXT`, default 4). */
  imagesInContext: number;
  /** `VISION`: `native` (default), `describe` or `off`. */
  vision: VisionMode;
  /** `VISION_MODEL`: the model that describes images with `VISION=describe`; "": the turn's. */
  visionModel: string;
  /** Characters of a document's text the model is given (`MEDIA_TEXT_MAX_CHARS`, default 20 000). */
  textMaxChars: number;
  /** How long fetching one chat platform medium may take, in ms (`MEDIA_DOWNLOAD_TIMEOUT_MS`, default 30 s). */
  downloadTimeoutMs: number;
  /**
   * Where voice is transcribed: the endpoint (`TRANSCRIBE_BASE_URL`, …), else the Workers AI
   * binding (`AI`, with an `@cf/` `TRANSCRIBE_MODEL`); null: voice is refused.
   */
  transcribe: TranscribeSettings | WorkersAiTranscribeSettings | null;
  /**
   * How this deployment loads pdf.js (`defineBaton({ pdf })`: its code, not an env var, so each
   * deployment in a bundle has its own); null: PDFs are refused (`PDF_NOT_READ`).
   */
  pdf: PdfjsLoader | null;
}

/** The defaults, as the settings table has them. */
export const DEFAULT_MEDIA_SETTINGS: MediaSettings = {
  maxBytes: 20_000_000,
  imagesInContext: 4,
  vision: "native",
  visionModel: "",
  textMaxChars: 20_000,
  downloadTimeoutMs: 30_000,
  transcribe: null,
  pdf: null,
};

// A turn's new media made text once (voice transcribed, documents read) and kept as each reference's description, so no later turn reads them again; runtime-neutral.
import { errorText } from "../runtime/mod.ts";
import type { FetchFn } from "../runtime/http_out.ts";
import type { ImageDescriber } from "./describe_image.ts";
import { AUDIO_TYPES, deriveMediaText } from "./derive_text.ts";
import { isMediaRef, type MediaItem, type MediaRef } from "./media_ref.ts";
import type { MediaSettings } from "./media_settings.ts";
import type { MediaStore } from "./media_store.ts";
import { readImage } from "./read_image.ts";
import { IMAGE_TYPES } from "./sniff_media_type.ts";
import { openAITranscriber, type Transcriber } from "./transcribe.ts";
import { workersAiTranscriber } from "./workers_ai_transcriber.ts";

/** What describing a turn's media needs. */
export interface DescribeMediaOptions {
  /** The `MEDIA` store the bytes are read from; absent: each is noted as unreadable. */
  store?: MediaStore;
  settings: MediaSettings;
  /** The turn's signal: `/stop` and the turn's timeout stop a transcription. */
  signal?: AbortSignal;
  /**
   * The transcriber; by default the one `settings.transcribe` names (`openAITranscriber` on an
   * endpoint, `workersAiTranscriber` on the `AI` binding; none: voice refused).
   */
  transcribe?: Transcriber | null;
  /** The fetch the default transcriber uses (tests). */
  fetch?: FetchFn;
  /** With `VISION=describe`: puts a stored image into words (./describe_image.ts); absent: images are left. */
  describeImage?: ImageDescriber | null;
}

/**
 * `media` with a `description` on each stored voice note, recording or document that has none:
 * its text (`deriveMediaText`: a labelled transcript, a document's text within
 * `MEDIA_TEXT_MAX_CHARS`), or a short note of why it could not be read (`[voice message] (voice
 * notes are not transcribed on this deployment)`). Called on the user message's media at the
 * start of its turn: the turn keeps the references so described in its transcript, so a voice
 * note is transcribed once, not in every turn that shows it. With `VISION=describe` a stored
 * image gets the vision model's words for it the same way (`describeImage`); links are left. A failure is a note, never an error (only the turn's abort is thrown): a bad file must not
 * fail its turn or poison the session.
 */
export async function describeMedia(
  media: readonly MediaItem[],
  options: DescribeMediaOptions,
): Promise<MediaItem[]> {
  const { settings } = options;
  const transcribe = options.transcribe !== undefined
    ? options.transcribe
    : settings.transcribe === null
    ? null
    : "ai" in settings.transcribe
    ? workersAiTranscriber(settings.transcribe)
    : openAITranscriber(settings.transcribe, options.fetch ? { fetch: options.fetch } : {});
  return await Promise.all(media.map(async (item): Promise<MediaItem> => {
    if (!isMediaRef(item) || item.description !== undefined) return item;
    if (IMAGE_TYPES.has(item.type)) {
      const describe = settings.vision === "describe" ? options.describeImage : null;
      return describe ? await _described(item, describe, options) : item;
    }
    const note = (why: string) => ({ ...item, description: `${_label(item)} (${why})` });
    if (!options.store) return note("media storage is not configured");
    let bytes: Uint8Array | null;
    try {
      bytes = await options.store.get(item.id);
    } catch {
      options.signal?.throwIfAborted();
      return note("the media store could not be read");
    }
    if (!bytes) return note("it is no longer stored");
    const text = await deriveMediaText(bytes, item.type, {
      maxChars: settings.textMaxChars,
      transcribe,
      pdf: settings.pdf,
      ...(item.name ? { name: item.name } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return text.ok ? { ...item, description: text.text } : note(text.reason);
  }));
}

/** A stored image with the vision model's words for it, or a note of why there are none. */
async function _described(
  item: MediaRef,
  describe: ImageDescriber,
  options: DescribeMediaOptions,
): Promise<MediaRef> {
  const what = `${item.name ?? item.type}, ${item.size} B`;
  const got = await readImage(item, { ...options, maxBytes: options.settings.maxBytes });
  if (!got.ok) return { ...item, description: `${what} (it could not be described: ${got.why})` };
  try {
    const words = await describe({ bytes: got.bytes, type: got.type }, options.signal);
    return { ...item, description: words || `${what} (the vision model said nothing)` };
  } catch (error) {
    options.signal?.throwIfAborted();
    const why = errorText(error).slice(0, 200);
    return { ...item, description: `${what} (it could not be described: ${why})` };
  }
}

/** How a medium that could not be read is named in its note. */
function _label(item: MediaRef): string {
  if (AUDIO_TYPES.has(item.type)) return item.name ? `[audio ${item.name}]` : "[voice message]";
  return `[file: ${item.name ?? item.type}]`;
}

// lib/media's face: media bytes in a store, typed by content, referenced from the transcript, shown to the model; runtime-neutral.
export { audioDuration, formatDuration } from "./audio_duration.ts";
export {
  AUDIO_TYPES,
  deriveMediaText,
  mediaReading,
  mediaTextRefusal,
  NOT_TRANSCRIBED,
  PDF_NOT_READ,
  TEXT_TYPES,
} from "./derive_text.ts";
export type { MediaReading, MediaText, MediaTextOptions } from "./derive_text.ts";
export type { PdfjsLoader, PdfjsModule } from "./pdf_text.ts";
export { DESCRIBE_IMAGE_PROMPT, imageDescriber } from "./describe_image.ts";
export type { ImageDescriber } from "./describe_image.ts";
export { describeMedia } from "./describe_media.ts";
export type { DescribeMediaOptions } from "./describe_media.ts";
export { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
export type { MediaSettings, VisionMode } from "./media_settings.ts";
export { memoryMediaStore, notingMediaStore } from "./media_store.ts";
export { evictingMediaStore, IMAGE_CACHE_MAX_CHARS, ImageCache } from "./image_cache.ts";
export type { MediaStore } from "./media_store.ts";
export { isMediaRef, mediaKey, mediaPrefix } from "./media_ref.ts";
export { eraseSessionMedia } from "./erase_media.ts";
export type { MediaItem, MediaLink, MediaPart, MediaRef } from "./media_ref.ts";
export { messageMedia, withMessageMedia } from "./message_media.ts";
export { mediaModelView, placeholder } from "./model_view.ts";
export type { ModelViewOptions } from "./model_view.ts";
export { MediaRefusal, prepareImage, storePreparedImage } from "./prepare_image.ts";
export type { ImageChecks, PreparedImage } from "./prepare_image.ts";
export { prepareFile } from "./prepare_file.ts";
export { readImage } from "./read_image.ts";
export type { ImageRead, ImageReadOptions } from "./read_image.ts";
export { prepareRequestImages } from "./request_images.ts";
export type { RequestImages, StoredImages } from "./request_images.ts";
export { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";
export { openAITranscriber, TRANSCRIBE_TIMEOUT_MS } from "./transcribe.ts";
export type { Transcriber, TranscribeSettings } from "./transcribe.ts";
export { isAiRunner, workersAiTranscriber } from "./workers_ai_transcriber.ts";
export type { AiRunner, WorkersAiTranscribeSettings } from "./workers_ai_transcriber.ts";
export { mediaLabel } from "./platform_media.ts";
export type {
  FetchedMedia,
  MediaFetch,
  PlatformMedia,
  PlatformMediaKind,
} from "./platform_media.ts";
export { downloadMedia, overLimit, readCapped } from "./download_media.ts";
export type { DownloadOptions } from "./download_media.ts";
export { resolveMedia, unreadNotice } from "./resolve_media.ts";
export { MAX_FILES_PER_RESULT, outFileStore, UNKNOWN_FILE_TYPE } from "./out_files.ts";
export type { OutFileOptions } from "./out_files.ts";
export { MEDIA_URL_TTL_SECONDS, mediaFileUrl, mediaLinker, verifyMediaUrl } from "./media_url.ts";
export type { ResolvedMedia, ResolveOptions } from "./resolve_media.ts";

// lib/media's face: media bytes in a store, typed by content, referenced from the transcript, shown to the model; runtime-neutral.
export { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
export type { MediaSettings, VisionMode } from "./media_settings.ts";
export { memoryMediaStore } from "./media_store.ts";
export type { MediaStore } from "./media_store.ts";
export { isMediaRef, mediaKey } from "./media_ref.ts";
export type { MediaItem, MediaLink, MediaPart, MediaRef } from "./media_ref.ts";
export { messageMedia, withMessageMedia } from "./message_media.ts";
export { mediaModelView, placeholder } from "./model_view.ts";
export type { ModelViewOptions } from "./model_view.ts";
export { MediaRefusal, prepareImage, storePreparedImage } from "./prepare_image.ts";
export type { ImageChecks, PreparedImage } from "./prepare_image.ts";
export { readImage } from "./read_image.ts";
export type { ImageRead, ImageReadOptions } from "./read_image.ts";
export { prepareRequestImages } from "./request_images.ts";
export type { RequestImages, StoredImages } from "./request_images.ts";
export { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";

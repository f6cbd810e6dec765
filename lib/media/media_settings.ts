// The media settings a deployment runs with (MEDIA_MAX_BYTES, MEDIA_IMAGES_IN_CONTEXT, VISION); runtime-neutral.

/** How images reach the model: `native` as image parts, `off` refused where they arrive. */
export type VisionMode = "native" | "off";

/** The media settings (read by lib/deployment/config.ts from the settings table). */
export interface MediaSettings {
  /** The largest medium accepted, in bytes (`MEDIA_MAX_BYTES`, default 20 MB). */
  maxBytes: number;
  /** How many of a conversation's newest images go to the model as images (`MEDIA_IMAGES_IN_CONTEXT`, default 4). */
  imagesInContext: number;
  /** `VISION`: `native` (default) or `off`. */
  vision: VisionMode;
}

/** The defaults, as the settings table has them. */
export const DEFAULT_MEDIA_SETTINGS: MediaSettings = {
  maxBytes: 20_000_000,
  imagesInContext: 4,
  vision: "native",
};

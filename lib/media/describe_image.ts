// VISION=describe: an image put into words once by a vision model (VISION_MODEL on the same endpoint), for a model that reads text only; runtime-neutral.
import type { ChatMessage, ChatModel } from "../agent/mod.ts";
import { encodeBase64 } from "../runtime/mod.ts";

/** Puts an image into words; rejects when the model cannot (the caller notes it, never fails the turn). */
export type ImageDescriber = (
  image: { bytes: Uint8Array; type: string },
  signal?: AbortSignal,
) => Promise<string>;

/** What the vision model is asked: enough for a text-only model to answer about the image. */
export const DESCRIBE_IMAGE_PROMPT = "Describe this image for someone who cannot see it: what it " +
  "shows, and any text in it word for word. Plain text, at most 150 words.";

/**
 * An `ImageDescriber` asking `model` (the deployment's, so its endpoint, key, retries and
 * fallbacks) for `modelName` (`VISION_MODEL`, else the turn's model) with one user message: the
 * prompt and the image as a data URL image part. No tools: the answer is the description.
 */
export function imageDescriber(model: ChatModel, modelName?: string): ImageDescriber {
  return async ({ bytes, type }, signal) => {
    const message = {
      role: "user",
      content: [
        { type: "text", text: DESCRIBE_IMAGE_PROMPT },
        { type: "image_url", image_url: { url: `data:${type};base64,${encodeBase64(bytes)}` } },
      ],
    } as ChatMessage;
    const reply = await model.complete({
      messages: [message],
      tools: [],
      ...(signal ? { signal } : {}),
      ...(modelName ? { model: modelName } : {}),
    });
    return reply.content.trim();
  };
}

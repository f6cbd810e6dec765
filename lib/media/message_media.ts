// The media of a message: kept in a `media` field beside a user message's text, read and set here only; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";

/**
 * A message's `media` (the references kept beside a user message's text in the transcript, or
 * a request's image parts before they are stored), [] when it has none. The field is baton's own:
 * the model never sees it (`mediaModelView` turns it into image parts or text).
 */
export function messageMedia<T>(message: ChatMessage): T[] {
  const media = (message as { media?: unknown }).media;
  return Array.isArray(media) ? media as T[] : [];
}

/** `message` with `media` as its media; none: without the field. */
export function withMessageMedia(message: ChatMessage, media: readonly unknown[]): ChatMessage {
  const { media: _old, ...rest } = message as ChatMessage & { media?: unknown };
  return (media.length ? { ...rest, media: [...media] } : rest) as ChatMessage;
}

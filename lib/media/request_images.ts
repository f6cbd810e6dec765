// A request's image parts (its last user message's and its earlier messages'), checked before anything is stored, then stored under the session that runs it; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import type { MediaItem, MediaPart } from "./media_ref.ts";
import type { MediaStore } from "./media_store.ts";
import { messageMedia, withMessageMedia } from "./message_media.ts";
import {
  type ImageChecks,
  type PreparedImage,
  prepareImage,
  storePreparedImage,
} from "./prepare_image.ts";
import { prepareFile } from "./prepare_file.ts";

/** A request's images, checked: stored once the session that runs the turn is known. */
export interface RequestImages {
  /** Whether the request carries any image. */
  readonly any: boolean;
  /** Stores every image under `scope` (the session key that runs the turn). */
  store(store: MediaStore | undefined, scope: string): Promise<StoredImages>;
}

/** A request's images once stored. */
export interface StoredImages {
  /** The last user message's media. */
  media: MediaItem[];
  /** `messages` (a seed holding the request's earlier messages) with references in place of their parts. */
  inMessages(messages: ChatMessage[]): ChatMessage[];
}

/**
 * Checks every media part of a request (`prepareImage`; an audio or file part `prepareFile`): those of its earlier messages (each
 * message's `media` holding its parts) and of its last user message (`input`). The first refused
 * part throws its `MediaRefusal`; a refused request stores nothing.
 */
export function prepareRequestImages(
  earlier: ChatMessage[],
  input: MediaPart[],
  checks: ImageChecks,
): RequestImages {
  const parts = [...earlier.flatMap((m) => messageMedia<MediaPart>(m)), ...input];
  const prepared = new Map<string, PreparedImage>(
    parts.map((
      part,
    ) => [part.path, part.kind ? prepareFile(part, checks) : prepareImage(part, checks)]),
  );
  return {
    any: prepared.size > 0,
    async store(store, scope) {
      const items = new Map<string, MediaItem>();
      if (prepared.size) {
        if (!store) throw new Error("images were checked for a media store that is not there");
        await Promise.all(
          [...prepared].map(async ([path, image]) =>
            items.set(path, await storePreparedImage(image, store, scope))
          ),
        );
      }
      const stored = (list: MediaPart[]) => list.flatMap((p) => items.get(p.path) ?? []);
      return {
        media: stored(input),
        inMessages: (messages) =>
          messages.map((message) => {
            const media = messageMedia<MediaPart | MediaItem>(message);
            if (!media.some((item) => "path" in item)) return message;
            return withMessageMedia(
              message,
              media.flatMap((item) => "path" in item ? items.get(item.path) ?? [] : [item]),
            );
          }),
      };
    },
  };
}

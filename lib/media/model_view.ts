// What the model sees of a conversation's media: the newest images as image parts (read inside the turn), older ones and unreadable ones as text; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import { encodeBase64 } from "../runtime/mod.ts";
import { isMediaRef, type MediaItem, type MediaRef } from "./media_ref.ts";
import { IMAGE_TYPES } from "./sniff_media_type.ts";
import type { MediaSettings } from "./media_settings.ts";
import type { MediaStore } from "./media_store.ts";
import { messageMedia, withMessageMedia } from "./message_media.ts";
import { type ImageRead, type ImageReadOptions, readImage } from "./read_image.ts";
import type { ImageCache } from "./image_cache.ts";

/** What a turn's view of its media needs: how to read an image, and the media settings. */
export interface ModelViewOptions extends Omit<ImageReadOptions, "maxBytes"> {
  settings: MediaSettings;
  /**
   * The session object's stored images, model-ready (./image_cache.ts): a stored image found
   * there is neither read nor encoded again, only checked still stored (`MediaStore.has`, used
   * only where the store has it); one read is kept there. Links are fetched anew.
   */
  cache?: ImageCache;
}

/** An image part of a Chat Completions request to the model. */
type _ImagePart = { type: "image_url"; image_url: { url: string } };

/**
 * The messages a turn sends to the model, made from what it keeps: a user message's `media`
 * becomes image parts (`data:<type>;base64,…`, read from the store inside the turn) for the newest
 * `MEDIA_IMAGES_IN_CONTEXT` images of the conversation (none with `VISION=off`), and a text
 * placeholder for the others (`[image: <description, name or type>, <size>]`). An image that
 * cannot be read (deleted, a store error, a link that fails) becomes its placeholder with a note
 * saying so: never an error, so a bad image cannot fail this turn or any later one. Each image is
 * read once per view (one view per turn: its model calls share the reads), and a stored one once
 * per `cache` (one per session object: its turns share them). The `media` field never reaches the
 * model.
 */
export function mediaModelView(
  options: ModelViewOptions,
): (messages: ChatMessage[]) => Promise<ChatMessage[]> {
  const reads = new Map<string, Promise<_Shown>>();
  // Only with a store that can say an image is still there without reading it (R2's head): an
  // image deleted from MEDIA behind this object's back (a lifecycle rule) is then not shown.
  const cache = options.store?.has ? options.cache : undefined;
  const read = (item: MediaItem) => {
    const key = isMediaRef(item) ? `id:${item.id}` : `url:${item.url}`;
    let found = reads.get(key);
    if (!found) {
      const fresh = () =>
        _encoded(
          readImage(item, { ...options, maxBytes: options.settings.maxBytes }),
          isMediaRef(item) && cache ? (url) => cache.set(item.id, url) : undefined,
        );
      const kept = isMediaRef(item) ? cache?.get(item.id) : undefined;
      found = kept !== undefined && isMediaRef(item)
        ? _stillStored(options.store!, item.id, kept, cache!).then((got) => got ?? fresh())
        : fresh();
      reads.set(key, found);
    }
    return found;
  };
  return async (messages) => {
    const all = messages.map((m) => messageMedia<MediaItem>(m));
    // Voice and documents are text (their stored description); only images count as images.
    const media = all.map((items) => items.filter(_isImage));
    const total = media.reduce((n, items) => n + items.length, 0);
    if (total === 0 && !messages.some((m) => "media" in m)) return messages;
    const { vision, imagesInContext } = options.settings;
    // The newest images are shown: those whose place in the conversation is among the last.
    const shown = vision === "native" ? imagesInContext : 0;
    const offsets: number[] = [];
    media.reduce((n, items) => (offsets.push(n), n + items.length), 0);
    return await Promise.all(messages.map(async (message, i) => {
      if (!all[i].length) return withMessageMedia(message, []);
      const notes: string[] = all[i].filter((item) => !_isImage(item)).map(placeholder);
      const parts: _ImagePart[] = [];
      for (const [j, item] of media[i].entries()) {
        if (offsets[i] + j < total - shown) {
          notes.push(placeholder(item));
          continue;
        }
        const got = await read(item);
        if (got.ok) {
          parts.push({ type: "image_url", image_url: { url: got.url } });
        } else {
          notes.push(`${placeholder(item)} (the image could not be shown: ${got.why})`);
        }
      }
      return _withParts(message, notes, parts);
    }));
  };
}

/** An image as the model is sent it (its data URL), or why it could not be read. */
type _Shown = { ok: true; url: string } | { ok: false; why: string };

/**
 * A kept image's data URL once `store` says `id` is still there (one `has`, no bytes read); when
 * it is gone, dropped from `cache` and said so; undefined when the store cannot tell now (the
 * caller reads it afresh, which words the failure as a read would).
 */
async function _stillStored(
  store: MediaStore,
  id: string,
  url: string,
  cache: ImageCache,
): Promise<_Shown | undefined> {
  let there: boolean;
  try {
    there = await store.has!(id);
  } catch {
    return undefined;
  }
  if (there) return { ok: true, url };
  cache.delete(id);
  return { ok: false, why: "it is no longer stored" };
}

/** `read` as a data URL, told to `keep` (the cache) once encoded. */
async function _encoded(
  read: Promise<ImageRead>,
  keep: ((url: string) => void) | undefined,
): Promise<_Shown> {
  const got = await read;
  if (!got.ok) return got;
  const url = `data:${got.type};base64,${encodeBase64(got.bytes)}`;
  keep?.(url);
  return { ok: true, url };
}

/**
 * The text a medium stands as where it is not shown: an image's description, else its name or
 * type and size; a voice note's or document's description (its transcript or text, derived once
 * inside its first turn: ./describe_media.ts), else `[file: …]`.
 */
export function placeholder(item: MediaItem): string {
  if (!_isImage(item)) {
    const ref = item as MediaRef;
    return ref.description ?? `[file: ${ref.name ?? ref.type}, ${_size(ref.size)}]`;
  }
  if (isMediaRef(item)) {
    if (item.description) return `[image: ${item.description}]`;
    return `[image: ${item.name ?? item.type}, ${_size(item.size)}]`;
  }
  return `[image: ${item.name ?? item.url}]`;
}

/** A link is an image (only images are linked); a stored medium is one when its type is. */
function _isImage(item: MediaItem): boolean {
  return !isMediaRef(item) || IMAGE_TYPES.has(item.type);
}

function _size(bytes: number): string {
  if (bytes < 1_000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1_000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A user message as sent: its text with the placeholders, then its image parts. */
function _withParts(message: ChatMessage, notes: string[], parts: _ImagePart[]): ChatMessage {
  const plain = withMessageMedia(message, []);
  const content = plain.content;
  const text = [typeof content === "string" ? content : _text(content), ...notes]
    .filter((t) => t).join("\n");
  if (!parts.length) return { ...plain, content: text } as ChatMessage;
  return {
    ...plain,
    content: [...(text ? [{ type: "text" as const, text }] : []), ...parts],
  } as ChatMessage;
}

function _text(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("");
}

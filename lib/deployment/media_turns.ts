// Turns whose message carries a chat platform's media: downloaded and stored inside the turn, the message rewritten to references, one notice for what could not be read; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import {
  type MediaFetch,
  type MediaSettings,
  type MediaStore,
  resolveMedia,
  unreadNotice,
} from "../media/mod.ts";
import type { TurnExecutor } from "../session/mod.ts";
import type { PlatformAdapter, PlatformEnv } from "../chat/mod.ts";

/** What reading a chat's media needs (see `resolveMedia`). */
export interface ChatMediaOptions {
  /** The fetch of the adapter named `platform` (`PlatformAdapter.fetchMedia` bound to the env). */
  fetchFor(platform: string): MediaFetch | undefined;
  store?: MediaStore;
  settings: MediaSettings;
}

/**
 * `execute` for messages whose media a chat platform announced but nobody fetched yet: inside the
 * turn (the acknowledgement never waits, the turn's signal bounds and stops every download) each
 * medium is fetched, typed by its bytes and stored, and the message goes on with references in
 * its `media` (so the transcript keeps them and no later turn downloads again; voice and documents
 * are made text by the executor, lib/media/describe_media.ts) and a mark of each medium not read. What could not be read is said once, ahead of the reply; when nothing is left for
 * the model (a photo without a caption that failed), the notice is the reply and the model is not
 * called — the message is still recorded, its mark of the unread medium in the conversation.
 */
export function withChatMedia(execute: TurnExecutor, options: ChatMediaOptions): TurnExecutor {
  return async (message, history, signal, progress, approvals) => {
    // A turn resumed after its pause, or continuing on tool results, has its user message already.
    const announced = message.platformMedia ?? [];
    if (!announced.length || approvals?.resume || message.toolResults?.length) {
      return await execute(message, history, signal, progress, approvals);
    }
    const read = await resolveMedia(announced, {
      ...options,
      scope: message.context.session_key ?? "",
      signal,
    });
    const text = [message.text, ...read.marks].filter((t) => t.trim()).join("\n");
    const notice = unreadNotice(read.problems);
    if (!message.text.trim() && !read.media.length) {
      // Nothing for the model to answer: the notice is the reply, the message kept as it reads.
      const reply = notice ?? "";
      const messages: ChatMessage[] = [
        { role: "user", content: text },
        { role: "assistant", content: reply },
      ];
      progress.messages = messages;
      return { reply, messages, usage: { prompt_tokens: 0, completion_tokens: 0 }, steps: 0 };
    }
    const { platformMedia: _, ...rest } = message;
    const media = [...message.media ?? [], ...read.media];
    const result = await execute(
      { ...rest, text, ...(media.length ? { media } : {}) },
      history,
      signal,
      progress,
      approvals,
    );
    return notice ? { ...result, reply: `${notice}\n\n${result.reply}` } : result;
  };
}

/** The `fetchFor` of `adapters` (each's `fetchMedia` bound to `env`), by platform name. */
export function adapterMediaFetch(
  adapters: readonly PlatformAdapter[],
  env: PlatformEnv,
): (platform: string) => MediaFetch | undefined {
  return (platform) => {
    const adapter = adapters.find((a) => a.name === platform);
    const fetch = adapter?.fetchMedia?.bind(adapter);
    return fetch ? (item, options) => fetch(item, env, options) : undefined;
  };
}

// The reply channel: the session's one way to a chat, over the table of adapters (split, send, in doubt, presence); runtime-neutral.
import type { z } from "zod";
import type {
  InDoubt,
  PartSend,
  PlatformAdapter,
  PlatformEnv,
  PreviewResult,
  ReplyTarget,
  SendResult,
} from "./platform.ts";
import { splitMessage } from "./split_message.ts";
import { type FileSources, sendFilePart } from "./file_part.ts";
import type { MediaRef } from "../media/mod.ts";

/** How the session sends a stored reply back: split into parts, then one send per part. */
export interface ReplyChannel {
  split(target: ReplyTarget, text: string): string[];
  send(target: ReplyTarget, text: string, part: PartSend): Promise<SendResult>;
  /**
   * What to do with a part whose send, last attempted at `attemptedAt`, was cut off: look where
   * the platform allows it, resend where a repeat cannot show twice, else `REPLY_IN_DOUBT`. A
   * file sent as native media carries no marker: it is never looked for.
   */
  inDoubt(
    target: ReplyTarget,
    part: { index: number; marker?: string; replaces?: string | null; file?: MediaRef | null },
    attemptedAt: number,
  ): Promise<InDoubt>;
  /** The adapter's `typing`; false where there is none. */
  typing?(target: ReplyTarget): Promise<boolean>;
  /** The adapter's `typingEveryMs` for `target`'s platform, where it sets one. */
  typingEveryMs?(target: ReplyTarget): number | undefined;
  /** The adapter's `preview`; "unsupported" where there is none. */
  preview?(
    target: ReplyTarget,
    text: string,
    draft: number,
    handle?: string,
  ): Promise<PreviewResult>;
  /** The adapter's `endPreview`, where there is one. */
  endPreview?(target: ReplyTarget, text: string | null, handle?: string): Promise<void>;
}

/** Characters each part leaves free for `RESEND_NOTE` or a platform's part marker. */
export const PART_ROOM = 80;

/** How far before a recorded attempt a look-back starts: the platform's clock is not ours. */
const _LOOK_BACK_MS = 5 * 60 * 1000;

/**
 * The reply channel over a table of adapters, by `target.platform`. Each stored target is checked
 * against its adapter's `replyTarget` here, once, so adapters receive only well-formed targets; a
 * target that fails the check, or names no adapter, is a final failure, never a throw. A part
 * that is a file (`PartSend.file`) is read from `files.store` and sent as the platform's own
 * media, or as a link or a note (./file_part.ts).
 */
export function replyChannel(
  adapters: readonly PlatformAdapter[],
  env: PlatformEnv,
  files: FileSources = {},
): ReplyChannel {
  const byName = new Map(adapters.map((a) => [a.name, a]));
  const unsure: InDoubt = (env.REPLY_IN_DOUBT ?? "").trim().toLowerCase() === "skip"
    ? "skip"
    : "resend_marked";
  return {
    // Without an adapter there is no limit to split by; the send below reports the problem.
    // Every part leaves room for what a send may add: the resend note, or GitHub's marker.
    split: (target, text) => {
      const adapter = byName.get(target.platform);
      if (!adapter) return [text];
      return splitMessage(text, adapter.maxMessageChars - PART_ROOM);
    },
    inDoubt: async (target, part, attemptedAt) => {
      const adapter = byName.get(target.platform);
      const checked = adapter?.replyTarget.safeParse(target);
      // Sent again, a broken target fails for good like the first time: nothing can show twice.
      if (!adapter || !checked?.success) return "resend";
      if (adapter.idempotentPart?.(part.index)) return "resend";
      // A file share carries no marker (Slack's file message has no metadata): not finding one
      // would say "absent" of a file that may be in the chat.
      const native = part.file && adapter.sendFile;
      if (adapter.findPart && part.marker && !native) {
        const found = await adapter.findPart(
          checked.data,
          part.marker,
          attemptedAt - _LOOK_BACK_MS,
          env,
        );
        if (found !== null) return found ? "delivered" : "resend";
      }
      // An edit of the turn's preview message into the part cannot show it twice either.
      return part.replaces ? "resend" : unsure;
    },
    typingEveryMs: (target) => byName.get(target.platform)?.typingEveryMs,
    typing: async (target) => {
      const found = _checked(byName, target);
      return found?.adapter.typing ? await found.adapter.typing(found.target, env) : false;
    },
    preview: async (target, text, draft, handle) => {
      const found = _checked(byName, target);
      if (!found?.adapter.preview) return "unsupported";
      return await found.adapter.preview(found.target, text, draft, env, handle);
    },
    endPreview: async (target, text, handle) => {
      const found = _checked(byName, target);
      await found?.adapter.endPreview?.(found.target, text, env, handle);
    },
    send: (target, text, part) => {
      const adapter = byName.get(target.platform);
      if (!adapter) return _refused(`no adapter for platform ${JSON.stringify(target.platform)}`);
      const checked = adapter.replyTarget.safeParse(target);
      if (!checked.success) {
        return _refused(
          `the ${adapter.name} reply target is invalid: ${_firstIssue(checked.error)}`,
        );
      }
      if (part.file) {
        return sendFilePart(adapter, checked.data, text, { ...part, file: part.file }, env, files);
      }
      return adapter.send(checked.data, text, part, env);
    },
  };
}

/** The adapter of `target` and the target as it checked it, or null (no adapter, or a bad target). */
function _checked(
  byName: Map<string, PlatformAdapter>,
  target: ReplyTarget,
): { adapter: PlatformAdapter; target: ReplyTarget } | null {
  const adapter = byName.get(target.platform);
  const checked = adapter?.replyTarget.safeParse(target);
  return adapter && checked?.success ? { adapter, target: checked.data } : null;
}

function _refused(message: string): Promise<SendResult> {
  // Stored data does not heal by waiting: never retryable.
  return Promise.resolve({ ok: false, status: 0, retryable: false, message });
}

// Names the field and the rule, never the value: a target may hold a credential (Discord's token).
function _firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "rejected";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

// The one way a stored text reaches a chat: send a part once, wait out 429s, record the result; runtime-neutral.
import { type ReplyChannel, type ReplyTarget, RESEND_NOTE } from "../chat/mod.ts";
import { abortable } from "./abortable.ts";
import { LiveReply, type LiveReplyOptions } from "./live_reply.ts";
import { type OutboxPart, type OutboxStore, partLabel } from "./outbox.ts";
import type { SessionDb } from "./session_db.ts";
import { type ContextFields, log, withContextFields, withLogFields } from "../runtime/mod.ts";

/** How one part's send ended. `stopped`: the caller lost interest (a stop) and nothing was recorded. */
export type PartResult = "sent" | "failed" | "in_doubt" | "stopped";

/** What the sender needs. */
export interface OutboxSenderOptions {
  channel: ReplyChannel;
  /** Longest wait for one part's send, Retry-After included, before giving up on it. */
  maxSendWaitMs: number;
  /** Whether a chat turn previews its reply as it grows (`STREAM_REPLIES`); default true. */
  previews?: boolean;
  /**
   * The context of message `seq`, bound while a part about it is sent: a send runs where no
   * message's frame may be (a notice flushed by the drain or the alarm), and its lines must say
   * whose it is.
   */
  contextOf?: (seq: number) => ContextFields | null;
  now: () => number;
}

/** The error recorded for a part in doubt left unsent (`REPLY_IN_DOUBT=skip`); the inspector shows it as in doubt. */
export const UNCONFIRMED_SEND =
  "not resent (REPLY_IN_DOUBT=skip): an earlier send of this part was cut off before its answer " +
  "was recorded";

/** Sends outbox parts: reply parts for the drain, notices on their own (they never wait for a turn). */
export class OutboxSender {
  readonly #db: SessionDb;
  readonly #outbox: OutboxStore;
  readonly #options: OutboxSenderOptions;
  #flushing: Promise<void> | null = null;

  constructor(db: SessionDb, outbox: OutboxStore, options: OutboxSenderOptions) {
    this.#db = db;
    this.#outbox = outbox;
    this.#options = options;
  }

  /** Splits a text into the parts the target's platform accepts. */
  split(target: ReplyTarget, text: string): string[] {
    return this.#options.channel.split(target, text);
  }

  /**
   * A turn's presence in chat `target` (typing, a preview named `draft`, carrying on the preview
   * message `handle` names and storing a new one's through `onHandle`); started by the caller.
   */
  live(
    target: ReplyTarget,
    draft: number,
    preview: Pick<LiveReplyOptions, "handle" | "onHandle"> = {},
  ): LiveReply {
    return new LiveReply(this.#options.channel, target, draft, {
      previews: this.#options.previews ?? true,
      now: this.#options.now,
      ...preview,
    });
  }

  /**
   * Sends one stored part. A part whose earlier send left without an answer (a crash cut it off)
   * is resolved first, the way its platform allows (`ReplyChannel.inDoubt`): recorded as sent when
   * the chat shows it, sent again when it does not or a repeat cannot show twice, else sent again
   * behind `RESEND_NOTE` — or left, with `REPLY_IN_DOUBT=skip`. `owned` is asked before each
   * record: a holder that lost the session records nothing. Its lines carry its message's
   * context and the outbox row (seq, kind, part, outbox_id).
   */
  send(
    part: OutboxPart,
    target: ReplyTarget,
    signal?: AbortSignal,
    owned: () => boolean = () => true,
  ): Promise<PartResult> {
    const fields = {
      ...(part.seq !== null ? { seq: part.seq } : {}),
      kind: part.kind,
      part: partLabel(part),
      outbox_id: part.id,
    };
    const context = part.seq !== null ? this.#options.contextOf?.(part.seq) : null;
    const send = () => withLogFields(fields, () => this.#send(part, target, signal, owned));
    return context ? withContextFields(context, send) : send();
  }

  async #send(
    part: OutboxPart,
    target: ReplyTarget,
    signal: AbortSignal | undefined,
    owned: () => boolean,
  ): Promise<PartResult> {
    let text = part.text;
    let error: string | null;
    try {
      if (part.attemptedAt !== null) {
        const looking = this.#options.channel.inDoubt(target, part, part.attemptedAt);
        const way = await (signal ? abortable(looking, signal) : looking);
        if (!owned()) return "stopped";
        if (way === "delivered" || way === "skip") {
          const note = way === "skip" ? UNCONFIRMED_SEND : null;
          this.#db.transaction((tx) =>
            this.#outbox.markDone(tx, part.id, note, this.#options.now())
          );
          log.warn("reply part in doubt", { target: target.platform, way });
          return way === "skip" ? "in_doubt" : "sent";
        }
        log.warn("reply part in doubt", { target: target.platform, way });
        if (way === "resend_marked") text = RESEND_NOTE + part.text;
      }
      const sending = this.#attempts(part, text, target, signal);
      error = await (signal ? abortable(sending, signal) : sending);
    } catch {
      return "stopped";
    }
    if (!owned()) return "stopped";
    this.#db.transaction((tx) => this.#outbox.markDone(tx, part.id, error, this.#options.now()));
    if (!error) {
      log.debug("reply part sent", { target: target.platform });
      return "sent";
    }
    log.error("reply not delivered", { target: target.platform, error });
    return "failed";
  }

  /** Sends every unsent notice, oldest first; one flush at a time per instance. */
  flushNotices(): Promise<void> {
    // `finally` runs after this assignment even when there is nothing to send: reactions are async.
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    for (let parts = this.#outbox.unsentNotices(); parts.length;) {
      for (const part of parts) if (part.target) await this.send(part, part.target);
      parts = this.#outbox.unsentNotices();
    }
  }

  /**
   * Tries until sent, a failure that is final, or the wait budget is spent. As each request
   * leaves, `attempted_at` is stored (durable before the request is let out: the output gate holds
   * it); it is cleared when an answer says nothing was posted. An answer that leaves it open (a
   * 5xx, a lost connection) is resolved like a crash's part in doubt — looked for, resent, resent
   * behind the note, or given up — and tried again after a backoff. Returns the error, or null when
   * sent.
   */
  async #attempts(
    part: OutboxPart,
    text: string,
    target: ReplyTarget,
    signal?: AbortSignal,
  ): Promise<string | null> {
    const { channel, maxSendWaitMs, now } = this.#options;
    const mark = (leaving: boolean) =>
      this.#db.transaction((tx) => this.#outbox.markAttempt(tx, part.id, leaving, now()));
    let waited = 0;
    // Whether an earlier send of this part may have arrived (a crash or a 5xx left it in doubt):
    // then an answer saying this attempt posted nothing does not clear the mark, since a kill in
    // the wait after it must find the part still in doubt, never "never sent".
    let doubted = part.attemptedAt !== null;
    for (let tries = 0;; tries++) {
      // A stop during a 429 wait: the caller has moved on, and nothing more may leave.
      if (signal?.aborted) return "stopped";
      let result;
      try {
        // Marked as the request leaves, not before: nothing else lies in the window of doubt.
        result = await channel.send(target, text, {
          index: part.index,
          count: part.count,
          marker: part.marker,
          leaving: () => mark(true),
          ...(part.choices ? { choices: part.choices } : {}),
          ...(part.replaces ? { replaces: part.replaces } : {}),
          ...(part.file ? { file: part.file } : {}),
        });
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      if (result.ok) return null;
      const wait = result.retryAfterMs ?? Math.min(500 * 2 ** tries, 8_000);
      if (result.uncertain && waited + wait <= maxSendWaitMs) {
        doubted = true;
        const way = await channel.inDoubt(target, part, now());
        if (way === "delivered") return null;
        if (way === "skip") return result.message;
        if (way === "resend_marked" && !text.startsWith(RESEND_NOTE)) text = RESEND_NOTE + text;
      } else if (!result.retryable || waited + wait > maxSendWaitMs) {
        return result.message;
      } else if (!doubted) {
        mark(false);
      }
      waited += wait;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

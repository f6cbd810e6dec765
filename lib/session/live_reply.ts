// A chat turn while it runs: the platform's typing signal renewed, and the reply previewed as it grows, throttled and never in the reply's way; runtime-neutral.
import type { ReplyChannel, ReplyTarget } from "../chat/mod.ts";

/** How a live reply behaves. */
export interface LiveReplyOptions {
  /** Preview the reply as it grows (`STREAM_REPLIES`); typing is shown either way. */
  previews: boolean;
  /** Typing renewed this often, where the platform sets no interval (Telegram's lasts about 5 s). */
  typingEveryMs?: number;
  /** At most one preview update this often per chat (Telegram asks for about one a second). */
  previewEveryMs?: number;
  /** Nothing is shown before the turn has run this long (default 1 s): quick replies need none. */
  quietMs?: number;
  /** The preview message an earlier attempt of this turn created (a Slack message), if any. */
  handle?: string;
  /**
   * Called when the preview message's handle is first known, or forgotten (null: the preview was
   * removed), so that the caller can store it: the reply, a recovered attempt and a stop all end
   * that one message, and none leaves a second.
   */
  onHandle?: (handle: string | null) => void;
  now: () => number;
}

/** What a preview left behind that its turn's end must replace: the text a stopped turn shows. */
export const PREVIEW_STOPPED = "(stopped before the reply was finished)";

/**
 * One turn's presence in its chat. `delta` is called with each piece of the model's text, on the
 * model's stream: it never waits; updates go out one at a time, the latest text each time, no
 * more often than the throttle allows, and only the first part of a reply that will be split. A
 * 429 or an unsupported target stops previews for the turn and nothing else. `close` stops
 * everything and waits for an update in flight, so none lands after the final reply.
 */
export class LiveReply {
  readonly #channel: ReplyChannel;
  readonly #target: ReplyTarget;
  readonly #draft: number;
  readonly #options: LiveReplyOptions;
  #text = "";
  #shownText = "";
  #previews: boolean;
  #failures = 0;
  #closed = false;
  #inFlight: Promise<void> | null = null;
  #lastAt = -Infinity;
  /** Set by `start`: how long nothing is shown. */
  #quiet = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** The first typing's timeout, then the renewals' interval. */
  #typing: ReturnType<typeof setTimeout> | null = null;
  /** How many preview updates were shown: a stopped turn replaces a preview only if there was one. */
  #shown = 0;
  /** The preview's own message, where the platform makes one (see `PreviewResult`). */
  #handle: string | undefined;

  constructor(
    channel: ReplyChannel,
    target: ReplyTarget,
    draft: number,
    options: LiveReplyOptions,
  ) {
    this.#channel = channel;
    this.#target = target;
    this.#draft = draft;
    this.#options = options;
    this.#previews = options.previews && channel.preview !== undefined;
    this.#handle = options.handle;
  }

  /** The preview's own message, which the reply's first part replaces; undefined where none. */
  get handle(): string | undefined {
    return this.#handle;
  }

  /**
   * Starts the presence: typing after `quietMs` (a reply that comes sooner needs none, and costs
   * no extra call) and renewed until `close`, unless the platform has no such signal. The first
   * preview waits as long after the first piece of text, for the same reason.
   */
  start(): void {
    const quiet = this.#options.quietMs ?? 1_000;
    this.#quiet = quiet;
    if (!this.#channel.typing) return;
    const typing = () => {
      this.#channel.typing!(this.#target).then((renew) => {
        if (!renew) this.#stopTyping();
      }, () => this.#stopTyping());
    };
    this.#typing = setTimeout(() => {
      if (this.#closed) return;
      typing();
      const every = this.#channel.typingEveryMs?.(this.#target) ?? this.#options.typingEveryMs;
      this.#typing = setInterval(typing, every ?? 4_000);
    }, quiet);
  }

  /** Adds a piece of the reply's text; a preview follows when the throttle allows. */
  delta(piece: string): void {
    if (this.#closed || !this.#previews) return;
    // The first preview once the reply has been growing for the quiet time, then one per interval.
    if (!this.#text && this.#quiet > 0) {
      this.#lastAt = this.#options.now() + this.#quiet - (this.#options.previewEveryMs ?? 1_000);
    }
    this.#text += piece;
    this.#schedule();
  }

  /**
   * Ends the live reply: no more typing or previews, and none in flight. `replied`: the reply
   * follows (and replaces the preview). `stopped`: the turn ended without a reply, so a preview it
   * or an earlier attempt showed is replaced by `PREVIEW_STOPPED`. `paused`: the turn asks a
   * question first, so a preview message of its own is removed, and the reply comes after the
   * question rather than in a message above it.
   */
  async close(how: "replied" | "stopped" | "paused"): Promise<void> {
    this.#closed = true;
    this.#stopTyping();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#inFlight;
    if (how === "stopped" && (this.#shown > 0 || this.#handle !== undefined)) {
      await this.#channel.endPreview?.(this.#target, PREVIEW_STOPPED, this.#handle)
        .catch(() => {});
    } else if (how === "paused" && this.#handle !== undefined) {
      await this.#channel.endPreview?.(this.#target, null, this.#handle).catch(() => {});
      this.#handle = undefined;
      this.#options.onHandle?.(null);
    }
  }

  #schedule(): void {
    if (this.#inFlight || this.#timer !== null) return; // the next update takes the latest text
    const wait = this.#lastAt + (this.#options.previewEveryMs ?? 1_000) - this.#options.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.#update();
      }, wait);
    } else this.#update();
  }

  #update(): void {
    if (this.#closed || !this.#previews) return;
    // Only the first part of a reply that will be split: later parts are follow-ups, not edits.
    const text = this.#channel.split(this.#target, this.#text)[0] ?? "";
    if (!text.trim() || text === this.#shownText) return;
    this.#lastAt = this.#options.now();
    const preview = this.#channel.preview!(this.#target, text, this.#draft, this.#handle);
    this.#inFlight = preview.then((result) => {
      if (typeof result === "object") {
        // Stored before anything else can happen: this message is the one the reply replaces.
        if (result.handle !== this.#handle) this.#options.onHandle?.(result.handle);
        this.#handle = result.handle;
      }
      if (result === "shown" || typeof result === "object") {
        this.#shown++;
        this.#shownText = text;
        // A 429 or an unsupported target ends previews at once; failures after three.
      } else if (result !== "failed" || ++this.#failures >= 3) this.#previews = false;
    }, () => {}).finally(() => {
      this.#inFlight = null;
      if (this.#text !== this.#shownText && !this.#closed) this.#schedule();
    });
  }

  #stopTyping(): void {
    // One handle: clearTimeout and clearInterval clear either kind.
    if (this.#typing !== null) clearTimeout(this.#typing);
    this.#typing = null;
  }
}

// What becomes of a message as it is submitted: a repeat, a command answered at once, or the busy policy's decision (queue, merge, interrupt, refuse); runtime-neutral.
import { parseYesNo, QUEUE_FULL_NOTICE, QUEUED_NOTICE } from "../chat/mod.ts";
import type { ApprovalGate } from "./approval_gate.ts";
import { decideBusy } from "./busy_policy.ts";
import { mergeAlbumPiece } from "./album.ts";
import { offerSteer, steerArgument } from "./steers.ts";
import { unstorable } from "./inbox_columns.ts";
import type { CommandRunner } from "./command_runner.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TurnRunner } from "./turn_runner.ts";
import type { BusyMode, InboundMessage, SubmitReceipt, TurnOutcome } from "./types.ts";

/** How long the same request is answered with its failed turn's outcome instead of a new run. */
const _REPLAY_MS = 60_000;

const _ZERO_USAGE = { prompt_tokens: 0, completion_tokens: 0 };

/** The busy policy's settings (see `SentinelOptions`). */
export interface AdmissionOptions {
  busyMode?: BusyMode;
  maxQueued?: number;
  busyNotice?: boolean;
}

/**
 * Decides, inside `submit`'s transaction, what a message is: a delivery seen before (its seq), a
 * command (answered and stored finished), refused, or stored — queued, merged into the newest
 * waiting message, or interrupting the running turn — with the notice a chat user gets.
 */
export class MessageAdmission {
  readonly #stores: SessionStores;
  readonly #gate: ApprovalGate;
  readonly #commands: CommandRunner;
  readonly #runner: TurnRunner;
  readonly #sender: OutboxSender | null;
  readonly #options: AdmissionOptions;

  constructor(
    parts: {
      stores: SessionStores;
      gate: ApprovalGate;
      commands: CommandRunner;
      runner: TurnRunner;
      sender: OutboxSender | null;
    },
    options: AdmissionOptions,
  ) {
    this.#stores = parts.stores;
    this.#gate = parts.gate;
    this.#commands = parts.commands;
    this.#runner = parts.runner;
    this.#sender = parts.sender;
    this.#options = options;
  }

  /**
   * submit()'s transaction: dedup, command, or the busy policy's decision. `steerTo` steers the
   * message into run `steerTo` (the runs API's steer: the caller checked the run has not ended).
   */
  admit(tx: Tx, submitted: InboundMessage, now: number, steerTo?: number): SubmitReceipt {
    // `/steer TEXT` (any mode) is its text offered to the running turn; a bare `/steer` is answered.
    const steerText = submitted.command?.command === "steer" ? steerArgument(submitted.text) : "";
    const steer = steerText !== "" || steerTo !== undefined;
    const message = steerText ? { ...submitted, text: steerText, command: null } : submitted;
    if (message.deliveryKey !== undefined) {
      const seen = this.#stores.inbox.seen(tx, message.deliveryKey, now);
      if (seen !== null) {
        const reused = message.requestHash !== undefined &&
          this.#stores.inbox.requestHashOf(seen) !== message.requestHash;
        if (reused) return { seq: 0, duplicate: false, refused: "idempotency_key_reused" };
        return { seq: seen, duplicate: true };
      }
      // Past the inbox's day: a platform that may deliver the same signed message again later
      // (no signed time, or retries for a week) had its key kept longer. Its row may be gone.
      if (this.#stores.seen.has(message.deliveryKey, now)) return { seq: 0, duplicate: true };
      if (message.keyMemoryMs !== undefined) {
        this.#stores.seen.remember(tx, message.deliveryKey, now, message.keyMemoryMs);
      }
    }
    // Never store what could not be read back: it would block the session (issue 26, finding 1).
    const unreadable = unstorable(message);
    if (unreadable) {
      const refused: SubmitReceipt = { seq: 0, duplicate: false, refused: "too_large" };
      return this.#withNotice(tx, message, refused, unreadable, now);
    }
    if (message.requestHash !== undefined) {
      // A client retrying a request whose turn failed or was stopped gets that outcome again.
      const failed = this.#stores.inbox.recentFailure(message.requestHash, now - _REPLAY_MS);
      if (failed !== null) return { seq: failed, duplicate: true };
    }
    // The command came parsed with the message; while a question is pending, a chat message's
    // bare "yes" or "no" answers it.
    const command = message.command === undefined || steer
      ? null
      : message.command ?? (this.#gate.waiting()?.question ? parseYesNo(message.text) : null);
    // `/compact` awaits a model call, which an answer here cannot: it is queued, a turn of its own
    // that compacts under the claim (compacted_turn.ts).
    if (command && command.command !== "compact") {
      const reply = this.#commands.answer(tx, command, message);
      const outcome: TurnOutcome = { status: "completed", reply, usage: _ZERO_USAGE };
      const seq = this.#stores.inbox.insert(tx, message, now, "command", outcome);
      return this.#withNotice(tx, message, { seq, duplicate: false }, reply, now);
    }
    if (message.continuesSeed && !this.#stores.continues(message.seed ?? [])) {
      return { seq: 0, duplicate: false, refused: "history_mismatch" };
    }
    const after = message.continuesAfter;
    if (after !== undefined && !this.#stores.endsConversation(after)) {
      return { seq: 0, duplicate: false, refused: "history_mismatch" };
    }
    // A later piece of an album whose first piece still waits joins it: one turn (album.ts).
    const piece = steer ? null : mergeAlbumPiece(this.#stores, tx, message, now);
    if (piece !== null) return { seq: piece, duplicate: false };
    const mode = this.#options.busyMode ?? "queue";
    const queued = mode === "merge" ? this.#stores.inbox.queued("newest") : null;
    // A message that cannot be read back is no merge target: the next claim fails it.
    const newest = queued?.message ? { seq: queued.seq, message: queued.message } : null;
    const running = this.#stores.claims.state().seq;
    const decision = decideBusy(
      {
        // A run the runs API steers may not have started yet: it takes the steer at its first step.
        running: running !== null || steerTo !== undefined,
        waiting: this.#stores.inbox.waitingCount(),
        mergeTarget: newest !== null,
      },
      { mode, maxQueued: this.#options.maxQueued ?? 32 },
      message.events === true,
      steer,
    );
    if (decision.action === "refuse") {
      const refused: SubmitReceipt = { seq: 0, duplicate: false, refused: "queue_full" };
      return this.#withNotice(tx, message, refused, this.#queueFullNotice(tx, message, now), now);
    }
    let seq: number;
    if (decision.action === "merge" && newest) {
      const text = `${newest.message.text}\n${message.text}`;
      const deliveryKey = newest.message.deliveryKey;
      // The merged turn's media: both messages', in order.
      const media = [...newest.message.media ?? [], ...message.media ?? []];
      const platformMedia = [
        ...newest.message.platformMedia ?? [],
        ...message.platformMedia ?? [],
      ];
      const merged = {
        ...message,
        text,
        deliveryKey,
        ...(media.length ? { media } : {}),
        ...(platformMedia.length ? { platformMedia } : {}),
      };
      this.#stores.inbox.replaceMessage(tx, newest.seq, merged);
      seq = this.#stores.inbox.insert(tx, message, now, "merged", null, newest.seq);
    } else {
      seq = this.#stores.inbox.insert(tx, message, now, "queued");
      if (message.events) this.#stores.events.emit(tx, seq, "run.queued", {});
      const target = steerTo ?? running;
      if (decision.action === "steer" && target !== null) offerSteer(this.#stores, tx, seq, target);
    }
    if (decision.action === "interrupt") {
      this.#runner.endCurrent(tx, "interrupted", "interrupted by a newer message");
    }
    const notice = decision.notify ? this.#queuedNotice(tx, message, now) : undefined;
    return this.#withNotice(tx, message, { seq, duplicate: false }, notice, now);
  }

  /** Adds `notice` to the receipt and, for a chat user, to the outbox. */
  #withNotice(
    tx: Tx,
    message: InboundMessage,
    receipt: SubmitReceipt,
    notice: string | undefined,
    now: number,
  ): SubmitReceipt {
    if (notice === undefined) return receipt;
    if (message.reply && this.#sender) {
      this.#stores.outbox.add(tx, "notice", receipt.seq || null, message.reply, [notice], now);
    }
    return { ...receipt, notice };
  }

  /**
   * The queue-full notice, for a chat user at most once per 30 s per session: a flood of refused
   * messages gets one reply, not one each (an API caller's refusal is its own 429).
   */
  #queueFullNotice(tx: Tx, message: InboundMessage, now: number): string | undefined {
    if (!message.reply) return QUEUE_FULL_NOTICE;
    return this.#stores.claims.takeNoticeSlot(tx, now, "queue_full")
      ? QUEUE_FULL_NOTICE
      : undefined;
  }

  /** The queued notice for a chat user, at most once per 30 s per session. */
  #queuedNotice(tx: Tx, message: InboundMessage, now: number): string | undefined {
    if (!message.reply || this.#options.busyNotice === false) return undefined;
    return this.#stores.claims.takeNoticeSlot(tx, now) ? QUEUED_NOTICE : undefined;
  }
}

// Claims, runs, delivers and ends a session's turns, and recovers a dead executor's claim; runtime-neutral.
import type { TurnResume } from "../agent/mod.ts";
import { callHook, hookContext, type HookOptions } from "../agent/turn_hooks.ts";
import { turnFiles } from "../agent/tool_files.ts";
import type { ApprovalGate, ResumedTurn } from "./approval_gate.ts";
import type { Claim } from "./claim.ts";
import type { JobScheduler } from "./job_scheduler.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import { type ClaimedMessage, recoverOrphaned } from "./recover_orphaned.ts";

export type { ClaimedMessage } from "./recover_orphaned.ts";
import { runClaimedTurn } from "./run_claimed_turn.ts";
import { deadlineSignal } from "../runtime/deadline.ts";
import { type CompactionOptions, Compactor, contextMeter } from "./compactor.ts";
import { runCompactedTurn } from "./compacted_turn.ts";
import { failUnreadable } from "./unreadable_message.ts";
import {
  countingTokens,
  noTokens,
  sessionBudgetRefusal,
  type TurnSpendOptions,
} from "./turn_spend.ts";
import { utcDay } from "./session_usage.ts";
import { claimedTurnJobs } from "./claimed_turn_jobs.ts";
import { steersIn, takeSteers } from "./steers.ts";
import { recordSend, timelineRecorder, traced } from "./turn_trace.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TenantJobSync } from "./tenant_job_sync.ts";
import {
  failureNotice,
  type InboundMessage,
  type StopType,
  type TurnExecutor,
  type TurnOutcome,
  type TurnProgress,
} from "./types.ts";

/** What the runner needs from its sentinel; `hooks.turnStart` is awaited (time-boxed) as a turn starts. */
export interface TurnRunnerOptions extends HookOptions {
  execute: TurnExecutor;
  historyWindow: number;
  /** `CONTEXT_TOKENS` and the summarizer (compactor.ts); absent: no compaction. */
  compaction?: CompactionOptions;
  turnTimeoutMs: number;
  maxAttempts: number;
  /** The daily token caps' session side (turn_spend.ts); absent: usage is only summed here. */
  spend?: TurnSpendOptions;
  /** Sends reply parts; without it replies are only collected by callers. */
  sender: OutboxSender | null;
  /** Pauses a turn whose model called a tool that asks, and takes it back up once answered. */
  gate: ApprovalGate;
  /** The session's jobs: a turn's scheduling tools create, list and cancel them here. */
  scheduler: JobScheduler;
  /** Its API tenant's count of them (MAX_JOBS_PER_TENANT), asked before a turn creates one. */
  tenantJobs: TenantJobSync;
  now: () => number;
}

/** The turn this instance runs now: lost with the instance, which is the point. */
interface _Running extends ClaimedMessage {
  controller: AbortController;
  progress: TurnProgress;
  startedAt: number;
}

/** Runs one claimed message at a time; the sentinel decides when. */
export class TurnRunner {
  readonly #stores: SessionStores;
  readonly #options: TurnRunnerOptions;
  #running: _Running | null = null;
  /** Measures and compacts the conversation before a turn's model call, under its claim. */
  readonly compactor: Compactor;

  constructor(stores: SessionStores, options: TurnRunnerOptions) {
    this.#stores = stores;
    this.#options = options;
    const { compaction, historyWindow, now } = options;
    this.compactor = new Compactor(stores, compaction, historyWindow, now);
  }

  /** The turn this instance runs, while it still holds the session. */
  current(): { startedAt: number; step: number } | null {
    const running = this.#held();
    return running ? { startedAt: running.startedAt, step: running.progress.step } : null;
  }

  /** Claims the oldest queued message, or null when the session is held or nothing waits. */
  claimNext(): ClaimedMessage | null {
    const { db, inbox, claims, events } = this.#stores;
    return db.transaction((tx) => {
      let next = inbox.queued("oldest");
      // A message that cannot be read back is failed, never left blocking the queue behind it.
      while (next && !next.message) {
        this.#failUnreadable(tx, next.seq);
        next = inbox.queued("oldest");
      }
      if (!next?.message) return null;
      const claim = claims.take(tx, next.seq, this.#options.now());
      if (!claim) return null;
      inbox.markRunning(tx, next.seq);
      // Every turn's timeline starts here (see turn_trace.ts); a chat's too.
      events.emit(tx, next.seq, "run.started", {});
      return { claim, message: next.message };
    });
  }

  /** Fails message `seq`, which cannot be read back, and sends its notice once committed. */
  #failUnreadable(tx: Tx, seq: number): void {
    const { sender, now } = this.#options;
    if (!failUnreadable(this.#stores, tx, seq, sender, now())) return;
    // A job later: a flush the drain began in this same step has read the outbox already, and a
    // call now would only join it (OutboxSender.flushNotices runs one flush at a time).
    tx.onCommit(() => void Promise.resolve().then(() => sender?.flushNotices()).catch(() => {}));
  }

  /** Takes back up the turn that waited for approval once every question is answered, or null. */
  resumeAnswered(): ResumedTurn | null {
    return this.#stores.db.transaction((tx) => this.#options.gate.resume(tx));
  }

  /**
   * Only called when no executor of this instance is alive: any claim left is a dead executor's,
   * run again, sent on, or given up (recover_orphaned.ts).
   */
  recoverOrphaned(): ClaimedMessage | null {
    return recoverOrphaned(this.#stores, this.#options, (tx, seq) => this.#failUnreadable(tx, seq));
  }

  /**
   * Runs a claimed message (from where it paused, with `resume`), stores what it produced, then
   * sends its reply and frees the session. A turn that pauses for approval keeps the claim.
   */
  run(claim: Claim, message: InboundMessage, resume?: TurnResume): Promise<void> {
    // Bound once: every line logged while the turn runs, and its reply is sent, names its
    // message and chat; its tools read its context and its jobs.
    const jobs = claimedTurnJobs(this.#stores, this.#options, claim, message);
    return traced(message, claim.seq, () => this.#run(claim, message, resume), jobs);
  }

  async #run(claim: Claim, message: InboundMessage, resume?: TurnResume): Promise<void> {
    const { db, claims, transcript, outbox, inbox, approvals } = this.#stores;
    if (!claims.holds(claim)) return; // stopped before it started
    // The last model call's context size is kept with the turn's messages (compactor.ts).
    const meter = contextMeter(timelineRecorder(this.#stores, claim, message));
    // The turn's tokens, whatever its end: summed per day here, settled with its reservation.
    const spent = noTokens();
    const emit = countingTokens(meter.emit, spent, this.#options.spend?.prices ?? null);
    // Messages steered into this turn (steers.ts); a resumed turn's pause holds those taken before it.
    const given = resume ? steersIn(this.#stores, claim.seq, resume.messages) : new Set<number>();
    const steers = () => takeSteers(this.#stores, claim, given);
    const progress: TurnProgress = {
      step: 0,
      messages: [],
      emit,
      deltas: message.events === true,
      steers,
    };
    const running = this.#start(claim, message, progress);
    // A chat sees the bot typing, and the reply grow where the platform can preview it.
    const live = message.reply && this.#options.sender
      ? this.#options.sender.live(message.reply, claim.seq, {
        // An earlier attempt's preview message is carried on, not left beside a second one.
        handle: inbox.preview(claim.seq) ?? undefined,
        onHandle: (handle) =>
          db.transaction((tx) => {
            if (claims.holds(claim)) inbox.setPreview(tx, claim.seq, handle);
          }),
      })
      : null;
    if (live) {
      progress.preview = (delta) => live.delta(delta);
      live.start();
    }
    if (!resume) {
      // Each attempt of a turn, not its resumption after an approval; a failing hook is ignored.
      const context = hookContext(message.context, claim.seq);
      await callHook(this.#options, "turnStart", { ...context, text: message.text });
    }
    // This turn's sender's grants (and those for everyone), never another group member's.
    const grants = approvals.grants(claim.conversation, message.context.user_id ?? "");
    const granted = new Set(grants.map((grant) => grant.tool));
    // The session's `/model` choice, read as the turn starts; a request's own `model` wins.
    const model = message.model ?? this.#stores.model.get();
    // The history is built (compacted first when too long) under the claim, just before the
    // model call that needs it; a /compact is a compaction only (compacted_turn.ts).
    const { turnTimeoutMs } = this.#options;
    // SESSION_TOKENS_PER_DAY: a turn that could pass it never calls the model.
    const refusal = sessionBudgetRefusal(this.#stores, this.#options.spend, this.#options.now());
    // The turn's deadline, its compaction included; cleared as they end, since a busy session
    // object may only have so many active timers (deadline.ts). A refused turn sets none.
    const deadline = deadlineSignal(refusal ? null : turnTimeoutMs, running.controller.signal);
    const result = refusal ? { outcome: refusal, messages: [] } : await runCompactedTurn(
      this.compactor,
      claim,
      message,
      progress,
      deadline.signal,
      (history) =>
        runClaimedTurn(
          this.#options.execute,
          model ? { ...message, model } : message,
          history,
          progress,
          running.controller,
          turnTimeoutMs,
          { granted, ...(resume ? { resume: this.#recording(claim, resume) } : {}) },
        ),
      { resumed: resume !== undefined, ...(model ? { model } : {}) },
    ).finally(deadline.clear);
    deadline.clear();
    this.#stop(running);
    // Before anything is sent: no preview may land after the reply, or after a stop's notice.
    const { paused } = result;
    await live?.close(!claims.holds(claim) ? "stopped" : paused ? "paused" : "replied");
    if (paused) {
      db.transaction((tx) => {
        if (claims.holds(claim)) this.#options.gate.pause(tx, claim.seq, message, paused);
      });
      this.#options.sender?.flushNotices().catch(() => {}); // the question, to a chat user
      return;
    }
    const { outcome } = result;
    const target = this.#options.sender ? message.reply : undefined;
    const written = db.transaction((tx) => {
      if (!claims.holds(claim)) return false;
      const now = this.#options.now();
      transcript.append(tx, claim.conversation, claim.seq, result.messages, now);
      // A turn SESSION_TOKENS_PER_DAY refused never ran: not a turn of the day's usage, and its
      // chat is told once a day (later refusals end silently).
      if (!refusal) this.#stores.usage.add(tx, utcDay(now), spent);
      if (outcome.status === "completed") {
        this.compactor.measure(tx, claim.conversation, meter.tokens());
      }
      if (!target || (refusal && !this.#stores.usage.noticeDue(tx, utcDay(now)))) {
        this.#stores.release(tx, claim.seq, outcome);
        return "released";
      }
      const text = outcome.status === "completed" ? outcome.reply : failureNotice(outcome.error);
      // The files its tools returned (and the reply's own images) go first, each a part; the
      // first text part replaces the turn's preview message, where the platform made one.
      const files = outcome.status === "completed" ? turnFiles(result.messages) : [];
      // Files without a word (an image model's answer) send no empty text part, unless a
      // preview message is there to be replaced.
      const bare = files.length > 0 && !text.trim() && !live?.handle;
      const parts = bare ? [] : this.#options.sender!.split(target, text);
      outbox.add(tx, "reply", claim.seq, target, parts, now, { replaces: live?.handle, files });
      inbox.markDelivering(tx, claim.seq, outcome);
      return "delivering";
    });
    // Messages steered into this turn used no turn of their own: their reservations are freed.
    const steered = written ? [...given].map((seq) => inbox.message(seq)) : [];
    // Settled once the reply is out, not beside it: a new sender's record is a new object, whose
    // start delayed every first message's reply. A reservation holds meanwhile: over, never under.
    try {
      if (written === "delivering") await this.deliverAndRelease(claim, message);
    } finally {
      if (written) this.#settleSpend(message, spent);
      for (const steer of steered) this.#settleSpend(steer, noTokens());
    }
  }

  /**
   * The reservation the message's turn took (`message.spend`) settled with what it used, begun in
   * a task of its own (a 0 ms timer); never throws.
   */
  #settleSpend(message: InboundMessage | null, spent: ReturnType<typeof noTokens>): void {
    const settle = this.#options.spend?.settle;
    if (!settle || !message?.spend) return;
    // Not in the task of the commit that told the outcome: the caller waiting for it (an API
    // request, on the same thread in workerd) answers from there, and the access object's call
    // begun beside it held that answer's body back, ≈0.6 ms of a warm turn (issue 32).
    setTimeout(() => {
      settle(message, spent).catch(() => {}); // the reservation stands for the day: over-counted, never under
    }, 0);
  }

  /** Sends the unsent parts of a claimed message's reply in order, then frees the session. */
  deliverAndRelease(claim: Claim, message: InboundMessage): Promise<void> {
    return traced(message, claim.seq, () => this.#deliverAndRelease(claim, message));
  }

  async #deliverAndRelease(claim: Claim, message: InboundMessage): Promise<void> {
    const { db, claims, inbox, outbox } = this.#stores;
    const record = timelineRecorder(this.#stores, claim, message);
    const running = this.#start(claim, message, { step: 0, messages: [] });
    try {
      const sender = this.#options.sender;
      for (const part of outbox.unsentReply(claim.seq)) {
        const target = part.target ?? message.reply;
        if (!sender || !target || !claims.holds(claim)) break;
        const owned = () => claims.holds(claim);
        const started = this.#options.now();
        const sent = await sender.send(part, target, running.controller.signal, owned);
        const ms = this.#options.now() - started;
        recordSend(record, part, sent, ms, () => outbox.replyError(claim.seq));
        if (sent === "stopped") return;
        if (sent === "failed") {
          this.#pauseUnreachableJob(claim.seq);
          break;
        }
      }
    } finally {
      this.#stop(running);
    }
    db.transaction((tx) => {
      const stored = claims.holds(claim) ? inbox.get(claim.seq)?.outcome : null;
      if (stored) this.#stores.release(tx, claim.seq, stored);
    });
  }

  /**
   * Ends the claimed turn now: keeps its partial work in the transcript marked, fails its message
   * with `type` (a reply being sent keeps its outcome), revokes the claim so the holder's late end
   * changes nothing, and aborts the holder once committed. Returns whether there was one.
   */
  endCurrent(tx: Tx, type: StopType, why: string): boolean {
    const { claims, inbox, transcript } = this.#stores;
    const claim = claims.state();
    if (claim.seq === null) return false;
    const running = this.#held();
    const row = inbox.get(claim.seq);
    let outcome: TurnOutcome = {
      status: "failed",
      error: { message: `the turn was ${why}`, type },
    };
    if (row?.status === "delivering" && row.outcome) {
      outcome = row.outcome;
    } else if (running) {
      const { messages } = running.progress;
      const now = this.#options.now();
      transcript.appendInterrupted(tx, claim.conversation, claim.seq, messages, why, now);
    } else if (row?.status === "waiting") {
      // No executor: the turn so far is its pause, and its open questions are denied.
      const paused = this.#stores.approvals.paused(claim.seq);
      const now = this.#options.now();
      const messages = paused?.messages ?? [];
      transcript.appendInterrupted(tx, claim.conversation, claim.seq, messages, why, now);
      this.#options.gate.denyOpen(tx, claim.seq, why);
    }
    this.#stores.release(tx, claim.seq, outcome, true);
    if (running) tx.onCommit(() => running.controller.abort(new Error(`turn ${why}`)));
    return true;
  }

  /** A job whose reply the platform refused for good (403: blocked, removed) pauses itself. */
  #pauseUnreachableJob(seq: number): void {
    const error = this.#stores.outbox.replyError(seq);
    if (!error || !/\b403\b/.test(error)) return;
    this.#stores.db.transaction((tx) =>
      this.#options.scheduler.pauseJobOf(tx, seq, `its chat could not be reached: ${error}`)
    );
  }

  /** `resume` storing each call it runs, and its result, while `claim` is current. */
  #recording(claim: Claim, resume: TurnResume): TurnResume {
    const { db, claims, approvals } = this.#stores;
    const record = (callId: string, result: string | null) =>
      db.transaction((tx) => {
        if (claims.holds(claim)) approvals.recordRun(tx, claim.seq, callId, result);
      });
    return { ...resume, record };
  }

  #held(): _Running | null {
    return this.#running && this.#stores.claims.holds(this.#running.claim) ? this.#running : null;
  }

  #start(claim: Claim, message: InboundMessage, progress: TurnProgress): _Running {
    const running: _Running = {
      claim,
      message,
      controller: new AbortController(),
      progress,
      startedAt: this.#options.now(),
    };
    this.#running = running;
    return running;
  }

  #stop(running: _Running): void {
    if (this.#running === running) this.#running = null;
  }
}

// The session coordinator: one turn at a time, messages in order, nothing lost or run twice, over the session's stores; runtime-neutral.
import type { ChatMessage, TurnResume } from "../agent/mod.ts";
import { type ApprovalAnswer, newConversationText, stopText } from "../chat/mod.ts";
import { errorText, log, type Transport } from "../runtime/mod.ts";
import type { ApprovalGate } from "./approval_gate.ts";
import { albumWait } from "./album.ts";
import type { ApprovalChoice } from "./approvals.ts";
import type { DirectorySync } from "./directory_sync.ts";
import { cancelledOutcome, type CommandRunner } from "./command_runner.ts";
import type { MessageAdmission } from "./message_admission.ts";
import type { SentinelOptions } from "./sentinel_options.ts";
import { sentinelParts } from "./sentinel_parts.ts";
import type { JobSpec } from "./job_scheduler.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { MediaRetention } from "./media_retention.ts";
import type { TurnEvents } from "./turn_events.ts";
import type { SessionStorage } from "./session_db.ts";
import { runStateOf, type SessionStores } from "./session_stores.ts";
import { steerable } from "./steers.ts";
import { type JobChange, SessionJobs } from "./session_jobs.ts";
import type { SessionDayUsage } from "./session_usage.ts";
import type { ClaimedMessage, TurnRunner } from "./turn_runner.ts";
import type {
  InboundMessage,
  MessageRecord,
  RunEvent,
  RunState,
  SessionSnapshot,
  SubmitReceipt,
  TurnExecutor,
  TurnOutcome,
} from "./types.ts";

/**
 * The session's sentinel. The claim is the `run` row, taken inside a synchronous transaction
 * before any await; the drain (started on submit, or by the alarm) runs the inbox in order.
 */
export class SessionSentinel {
  readonly #stores: SessionStores;
  readonly #sender: OutboxSender | null;
  readonly #runner: TurnRunner;
  readonly #commands: CommandRunner;
  readonly #admission: MessageAdmission;
  readonly #gate: ApprovalGate;
  /** The session's jobs, with its API tenant's count of them (`options.tenantJobs`). */
  readonly #jobs: SessionJobs;
  readonly #options: SentinelOptions;
  readonly #now: () => number;
  /** True while this instance's drain is alive: any other claim found is a dead executor's. */
  #draining = false;
  /** Settles when the drain alive now (if any) has ended. */
  #drained: Promise<void> = Promise.resolve();
  /** Closing for erasure (`close`): no drain starts, and one alive takes no next message. */
  #closing = false;
  /** Whether this instance has looked for notices an earlier instance left unsent. */
  #noticesChecked = false;
  /** Its events (`options.events`) and turnEnd hook, told where messages settle. */
  readonly #turnEvents: TurnEvents;
  /** The session's directory row, kept current (`options.directory`). */
  readonly #directory: DirectorySync | null;
  /** The media past MEDIA_RETENTION_DAYS, swept by the alarm (`options.mediaRetention`). */
  readonly #media: MediaRetention | null;

  constructor(storage: SessionStorage, execute: TurnExecutor, options: SentinelOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const parts = sentinelParts(storage, execute, options, this.#now, () => this.#armWatchdog());
    this.#stores = parts.stores;
    this.#sender = parts.sender;
    this.#runner = parts.runner;
    this.#commands = parts.commands;
    this.#admission = parts.admission;
    this.#gate = parts.gate;
    this.#jobs = new SessionJobs({
      ...parts,
      jobAllowed: options.jobAllowed,
      wake: () => this.#wake(this.#now()),
      flushNotices: () => this.#flushNotices(),
    });
    this.#turnEvents = parts.turnEvents;
    this.#directory = parts.directory;
    this.#media = parts.media;
    // A new instance: a claim left is a dead executor's (a crash, an eviction), and queued
    // messages wait for nobody. They are taken up on this first use, not only when the watchdog
    // alarm comes round (a restarted runtime may deliver it late). After the constructor returns,
    // so the host's sentinel exists when its drain starts.
    // A database this instance made holds neither (nor notices left unsent): no read for them.
    const { claims, inbox, created } = this.#stores;
    this.#noticesChecked = created;
    if (!created && (claims.state().seq !== null || inbox.waitingCount() > 0)) {
      queueMicrotask(() => this.#wake(this.#now()));
    }
  }

  /**
   * Stores a message durably (or finds its earlier delivery) and makes sure the drain will see it.
   * Commands are answered at once; a busy session queues, interrupts, merges or refuses by policy.
   */
  submit(message: InboundMessage): SubmitReceipt {
    const now = this.#now();
    const receipt = this.#stores.db.transaction((tx) => this.#admission.admit(tx, message, now));
    if (receipt.notice !== undefined && !receipt.duplicate) this.#flushNotices();
    // Also for a duplicate: a sender retrying after a restart wakes the recovery of its message.
    if (!receipt.refused) this.#wake(now);
    return receipt;
  }

  /** Stops the running turn and drops the waiting messages (`stop`), then starts a new conversation (`reset`). */
  control(command: "stop" | "reset"): { reply: string; stopped: boolean; dropped: number } {
    const result = this.#stores.db.transaction((tx) =>
      this.#commands.stopAll(tx, command === "reset")
    );
    this.#wake(this.#now());
    const reply = command === "reset"
      ? newConversationText(result.stopped)
      : stopText(result.stopped, result.dropped);
    return { ...result, reply };
  }

  /**
   * Answers the approval question run `seq` waits on (API callers): `not_found` when there is no
   * such message, `not_pending` when it asks nothing now (never asked, answered, or ended).
   */
  answerApproval(
    seq: number,
    choice: ApprovalChoice,
    by: string,
  ): "answered" | "not_pending" | "not_found" {
    if (!this.#stores.inbox.get(seq)) return "not_found";
    const result = this.#stores.db.transaction((tx) => this.#gate.answer(tx, { seq, choice, by }));
    if (result.kind !== "answered") return "not_pending";
    this.#flushNotices();
    this.#wake(this.#now());
    return "answered";
  }

  /** Answers a click on an approval button by chat user `context` (see `ApprovalGate.click`). */
  answerClick(data: string, sender: { userId: string; admin: boolean }): ApprovalAnswer {
    const result = this.#stores.db.transaction((tx) => this.#gate.click(tx, data, sender));
    if (result.kind === "answered") {
      this.#flushNotices();
      this.#wake(this.#now());
    }
    return result;
  }

  /** Resolves with the outcome of message `seq` once its turn has ended. */
  outcome(seq: number): Promise<TurnOutcome>;
  /**
   * With `untilPaused`, resolves with null instead while (or as soon as) its turn waits for
   * approval: a caller holding a request open can then tell its client the run id.
   */
  outcome(seq: number, untilPaused: boolean): Promise<TurnOutcome | null>;
  outcome(seq: number, untilPaused = false): Promise<TurnOutcome | null> {
    const row = this.#stores.inbox.get(seq);
    // A merged message's turn, and a steered one's (the turn that took it), answer it.
    if ((row?.status === "merged" || row?.status === "steered") && row.mergedInto !== null) {
      return this.outcome(row.mergedInto, untilPaused);
    }
    if (!row) {
      return Promise.resolve({
        status: "failed",
        error: { message: "unknown message", type: "not_found" },
      });
    }
    if (row.outcome && row.status !== "delivering") return Promise.resolve(row.outcome);
    if (untilPaused && row.status === "waiting") return Promise.resolve(null);
    return this.#stores.waiters.wait(seq, untilPaused);
  }

  /** A run's state, or null when there is no such message; a steered message's is its turn's. */
  runState(seq: number): RunState | null {
    const row = this.#stores.inbox.get(seq);
    if (row?.status === "steered" && row.mergedInto !== null) return this.runState(row.mergedInto);
    return row ? runStateOf(row.status, row.outcome) : null;
  }

  /**
   * Steers `message` into run `seq` (the runs API): offered to it, it is read at its next step, or
   * queued as its own turn when that turn ends first. `ended` when run `seq` has ended, `not_found`
   * when there is no such run; else the steer's receipt (it may be refused: `queue_full`).
   */
  steerRun(seq: number, message: InboundMessage): SubmitReceipt | "ended" | "not_found" {
    const now = this.#now();
    const result = this.#stores.db.transaction((tx) => {
      if (!this.#stores.inbox.get(seq)) return "not_found" as const;
      if (!steerable(this.#stores, seq)) return "ended" as const;
      return this.#admission.admit(tx, message, now, seq);
    });
    if (typeof result === "object" && !result.refused) this.#wake(now);
    return result;
  }

  /** Message `seq` as stored, its run's state and usage; null when there is no such message. */
  record(seq: number): MessageRecord | null {
    return this.#stores.record(seq);
  }

  /**
   * The conversation as its client saw it through turn `seq` (its user message and reply
   * included), or null when that turn did not complete.
   */
  turnsThrough(seq: number): ChatMessage[] | null {
    return this.#stores.turnsThrough(seq);
  }

  /** Whether turn `seq` completed and still ends this idle session's conversation (see `continuesAfter`). */
  endsConversation(seq: number): boolean {
    return this.#stores.endsConversation(seq);
  }

  /**
   * Sends a run's events to `transport`: every stored event first, in order, then the live ones;
   * closes it after the final event. Returns false when there is no such run.
   */
  subscribe(seq: number, transport: Transport<RunEvent>): boolean {
    if (!this.#stores.inbox.get(seq)?.events) return false;
    // A subscriber first in a restarted object must not replay what a dead attempt recorded: the
    // drain, started here, recovers that attempt (dropping its events) before its first await.
    this.#wake(this.#now());
    this.#stores.events.subscribe(seq, transport);
    return true;
  }

  /** Stops one run: the running turn, or a waiting message. Returns false when it had already ended. */
  cancelRun(seq: number): boolean {
    return this.#stores.db.transaction((tx) => {
      if (this.#stores.claims.state().seq === seq) {
        return this.#runner.endCurrent(tx, "cancelled", "stopped");
      }
      if (this.#stores.inbox.get(seq)?.status !== "queued") return false;
      this.#stores.settle(tx, seq, cancelledOutcome("the run was stopped"));
      return true;
    });
  }

  /** The session's state: whether a turn runs, how many messages wait, the current conversation. */
  snapshot(): SessionSnapshot {
    const claim = this.#stores.claims.state();
    return {
      running: claim.seq !== null,
      queued: this.#stores.inbox.waitingCount(),
      ...this.#stores.transcript.snapshot(claim.conversation),
      // The summaries later turns see instead of the oldest messages, marked with their range.
      ...this.#compactions(claim.conversation),
    };
  }

  /** The session's tokens on each of `days` (UTC `YYYY-MM-DD`; zeros for a day it used none). */
  usage(days: readonly string[]): SessionDayUsage[] {
    return days.map((day) => this.#stores.usage.day(day));
  }

  #compactions(conversation: number): { compactions?: SessionSnapshot["compactions"] } {
    const compactions = this.#runner.compactor.store.inspect(conversation);
    return compactions.length ? { compactions } : {};
  }

  /** Runs `change` on the session's jobs (API callers), then starts a drain (`SessionJobs.with`). */
  withJobs<T>(change: JobChange<T>): T {
    return this.#jobs.with(change);
  }

  /**
   * `withJobs` for a job `spec` (the jobs API's create): asked of the session's API tenant first
   * (MAX_JOBS_PER_TENANT), `{ refused }` with its text instead.
   */
  withNewJob<T>(spec: JobSpec, create: JobChange<T>): Promise<T | { refused: string }> {
    return this.#jobs.withNew(spec, create);
  }

  /** Settles once the tenant has been told of every change to the session's jobs made so far. */
  jobsReported(): Promise<void> {
    return this.#jobs.reported();
  }

  /**
   * Records that the session stored media under `keys` now (the host's store tells it of each
   * put), so that the alarm deletes them once past MEDIA_RETENTION_DAYS. No I/O.
   */
  noteMedia(keys: readonly string[]): void {
    if (!this.#closing) this.#media?.note(keys, this.#now());
  }

  /** The alarm's work: the watchdog, due jobs, expired media, and the drain of last resort. */
  async alarm(): Promise<void> {
    this.#stores.db.alarmFired();
    this.#directory?.retry();
    // Only here, never on a message's path; one indexed read when nothing has expired.
    if (this.#media && !this.#closing) await this.#media.sweep(this.#now());
    return this.drain();
  }

  /**
   * Recovers a claim whose executor died, then runs queued messages one at a time in arrival
   * order. A second drain while one is alive only re-arms the watchdog.
   */
  async drain(): Promise<void> {
    if (this.#draining) return this.#stores.db.armAlarm(this.#now() + this.#options.leaseMs);
    if (this.#closing) return;
    this.#draining = true;
    let ended = () => {};
    this.#drained = new Promise((resolve) => (ended = resolve));
    const started = this.#now();
    try {
      if (!this.#noticesChecked) {
        this.#noticesChecked = true;
        this.#flushNotices(); // notices a dead instance left unsent; later ones go out on submit
        this.#turnEvents.flush(); // and events: later ones go out as each is written
      }
      this.#stores.db.transaction((tx) => this.#gate.expire(tx, this.#now()));
      const resumed = this.#runner.recoverOrphaned();
      if (resumed) {
        this.#armWatchdog();
        await this.#runner.deliverAndRelease(resumed.claim, resumed.message);
      }
      while (!this.#closing) {
        // Due occurrences queue like any message (a turn that runs long delays, never loses, them).
        await this.#jobs.fire();
        // A turn answered after its pause goes first: it still holds the session.
        const resumed = this.#runner.resumeAnswered();
        // An album's first piece waits a moment for the rest (album.ts); the alarm, should this
        // instance die meanwhile.
        const wait = resumed ? 0 : albumWait(this.#stores, this.#now());
        if (wait > 0) {
          this.#stores.db.armAlarm(this.#now() + wait);
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        const next: ClaimedMessage & { resume?: TurnResume } | null = resumed ??
          this.#runner.claimNext();
        if (!next) break;
        this.#armWatchdog();
        // Media an API request stored before it was submitted: their retention starts now.
        this.noteMedia((next.message.media ?? []).flatMap((m) => "id" in m ? [m.id] : []));
        // A chat platform's ack leaves before the turn's work starts; a caller that waits for the
        // outcome (API, generic webhook) gains nothing from the hop.
        if (next.message.reply) await new Promise((resolve) => setTimeout(resolve, 0));
        await this.#runner.run(next.claim, next.message, next.resume);
        if (this.#now() - started > this.#options.drainBudgetMs) {
          this.#stores.db.armAlarm(this.#now());
          break;
        }
      }
      await this.#jobs.settle(); // a report that failed; once per instance (older jobs)
    } finally {
      this.#draining = false;
      ended();
    }
    // A turn waiting for approval needs no watchdog, only its deadline (then it counts as denied);
    // one alarm serves it and the next job occurrence, whichever comes first.
    const deadline = this.#stores.db.transaction((tx) => this.#gate.expire(tx, this.#now()));
    const next = [deadline, this.#jobs.nextDue(), this.#media?.nextDue() ?? null]
      .filter((t): t is number => t !== null);
    if (next.length) this.#stores.db.armAlarm(Math.min(...next));
  }

  /**
   * Readies the session for erasure (`eraseSession`): stops the running turn and drops the waiting
   * messages as `/stop` does (their callers get the cancelled outcome), waits up to `waitMs` for
   * the drain to end, then closes the directory sync and the database: this instance writes
   * nothing and arms no alarm again. Returns whether a turn was stopped.
   */
  async close(waitMs: number): Promise<boolean> {
    const { stopped } = this.#stores.db.transaction((tx) => this.#commands.stopAll(tx, false));
    this.#closing = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    // Also an admission or report in flight: the tenant's count of the session ends before its
    // erasure uncounts it.
    const ended = Promise.all([this.#drained, this.#jobs.reported()]);
    await Promise.race([ended, late]).finally(() => clearTimeout(timer));
    await this.#directory?.close();
    this.#stores.db.close();
    return stopped;
  }

  /**
   * Makes sure a drain will run: at once when the host can start one (its claim arms the watchdog
   * in this same synchronous step, so the message, the claim and the alarm are one durable write),
   * else by the alarm.
   */
  #wake(now: number): void {
    if (this.#draining || this.#closing) return;
    if (this.#options.startDrain) this.#options.startDrain();
    else this.#stores.db.armAlarm(now);
  }

  /** Makes sure the alarm fires within a lease while this turn holds the session. */
  #armWatchdog(): void {
    const now = this.#now();
    this.#stores.db.armWatchdog(now, now + this.#options.leaseMs);
  }

  #flushNotices(): void {
    this.#sender?.flushNotices().catch((error) => {
      log.error("notices not sent", { error: errorText(error) });
    });
  }
}

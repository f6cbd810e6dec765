// A session's stores over one database, and the two steps that span them: settle a message, prune old ones; runtime-neutral.
import { type ChatMessage, messageText } from "../agent/mod.ts";
import { ApprovalStore } from "./approvals.ts";
import { ClaimStore, FRESH_CLAIM } from "./claim.ts";
import { DEDUP_MS, InboxStore } from "./inbox.ts";
import { JobStore } from "./jobs.ts";
import { ModelChoiceStore } from "./model_choice.ts";
import { OutboxStore } from "./outbox.ts";
import { OutcomeWaiters } from "./outcome_waiters.ts";
import { RunEventStore } from "./run_events.ts";
import { migrate } from "./schema.ts";
import { SeenDeliveryStore } from "./seen_deliveries.ts";
import { SessionUsageStore } from "./session_usage.ts";
import { SessionDb, type SessionStorage, type Tx } from "./session_db.ts";
import { TranscriptStore } from "./transcript.ts";
import { isStopped, type MessageRecord, type RunState, type TurnOutcome } from "./types.ts";

/** How often an instance prunes: rows are kept a day, so a minute's delay changes nothing. */
const PRUNE_INTERVAL_MS = 60_000;

/** Every store of one session, sharing its database (migrated on construction). */
export class SessionStores {
  readonly db: SessionDb;
  readonly inbox: InboxStore;
  readonly claims: ClaimStore;
  readonly transcript: TranscriptStore;
  readonly outbox: OutboxStore;
  readonly events: RunEventStore;
  readonly approvals: ApprovalStore;
  readonly jobs: JobStore;
  /** The model the session's user chose (`/model`). */
  readonly model: ModelChoiceStore;
  /** Delivery keys remembered past the inbox's day (`InboundMessage.keyMemoryMs`). */
  readonly seen: SeenDeliveryStore;
  /** The session's tokens per UTC day (SESSION_TOKENS_PER_DAY, `/usage`). */
  readonly usage: SessionUsageStore;
  readonly waiters = new OutcomeWaiters();
  /**
   * Told of every settle, inside its transaction (the sentinel's turn events: an event row in the
   * same write, the turnEnd hook after its commit).
   */
  onSettle: ((tx: Tx, seq: number, outcome: TurnOutcome) => void) | null = null;
  readonly #now: () => number;
  /**
   * Whether this instance made the database (a new session, or one just erased): nothing in it
   * predates this instance, so it has no claim to recover, message waiting or notice unsent.
   */
  readonly created: boolean;
  /** When this instance last pruned: housekeeping, so once a minute is enough. */
  #prunedAt = -Infinity;

  constructor(storage: SessionStorage, now: () => number) {
    this.db = new SessionDb(storage);
    this.created = migrate(this.db);
    this.inbox = new InboxStore(this.db);
    this.claims = new ClaimStore(this.db);
    this.transcript = new TranscriptStore(this.db);
    this.outbox = new OutboxStore(this.db);
    this.events = new RunEventStore(this.db, now);
    this.approvals = new ApprovalStore(this.db);
    this.jobs = new JobStore(this.db);
    this.model = new ModelChoiceStore(this.db);
    this.seen = new SeenDeliveryStore(this.db);
    this.usage = new SessionUsageStore(this.db);
    this.#now = now;
    if (this.created) {
      // What a new database holds is known without a read: an unclaimed run row, an empty
      // transcript, and nothing old enough to prune for a minute.
      this.claims.knownFresh();
      this.transcript.knownEmpty(FRESH_CLAIM.conversation);
      this.#prunedAt = now();
    }
  }

  /** Stores message `seq`'s outcome (and its run's final event), told to waiters once committed. */
  settle(tx: Tx, seq: number, outcome: TurnOutcome): void {
    const message = this.inbox.finish(tx, seq, outcome, this.#now());
    // The messages merged into it (busy merge, albums) and steered into it (steers.ts) end with
    // it, the steered ones' waiters told its outcome.
    for (const steered of this.inbox.finishJoined(tx, seq, this.#now())) {
      this.waiters.settled(tx, steered, outcome);
    }
    this.approvals.end(tx, seq);
    this.waiters.settled(tx, seq, outcome);
    this.onSettle?.(tx, seq, outcome);
    // A run that asked for events ends its stream; any other that started ends its timeline, in a
    // small row (its reply is in the outbox and the transcript already).
    const full = message?.events === true;
    if (!full && !(message && this.events.recorded(seq))) return;
    const state = runStateOf("done", outcome);
    if (state.status === "completed") {
      const done = outcome.status === "completed" ? outcome : undefined;
      this.events.emit(tx, seq, "run.completed", {
        ...(full ? { output: state.output } : {}),
        usage: done?.usage,
        ...(full && done?.toolCalls ? { tool_calls: done.toolCalls } : {}),
        ...(done?.truncated ? { truncated: true } : {}),
      });
    } else if (state.status === "cancelled") this.events.emit(tx, seq, "run.cancelled", {});
    else this.events.emit(tx, seq, "run.failed", { error: state.error });
  }

  /** Settles the claimed message and frees the session (`revoke`: its holder's late end changes nothing). */
  release(tx: Tx, seq: number, outcome: TurnOutcome, revoke = false): void {
    this.claims.release(tx, revoke);
    this.settle(tx, seq, outcome);
    this.#prune(tx);
  }

  /** Forgets messages finished over a day ago whose delivery key is forgotten, with their parts and events. */
  #prune(tx: Tx): void {
    const now = this.#now();
    if (now - this.#prunedAt < PRUNE_INTERVAL_MS) return;
    this.#prunedAt = now;
    const cutoff = now - DEDUP_MS;
    this.inbox.forgetKeys(tx, now);
    const seqs = this.inbox.prune(tx, cutoff);
    this.outbox.prune(tx, seqs, cutoff);
    this.events.prune(tx, seqs);
    this.jobs.prune(tx);
    this.seen.prune(tx, now);
  }

  /** Message `seq` as stored, its run's state and usage; null when there is no such message. */
  record(seq: number): MessageRecord | null {
    const row = this.inbox.get(seq);
    const message = row ? this.inbox.message(seq) : null;
    if (!row || !message) return null;
    const done = row.outcome?.status === "completed" ? row.outcome : undefined;
    return {
      message,
      state: runStateOf(row.status, row.outcome),
      ...(done ? { usage: done.usage } : {}),
      ...(done?.toolCalls ? { toolCalls: done.toolCalls } : {}),
      ...(done?.truncated ? { truncated: true } : {}),
      ...(done?.files?.length ? { files: done.files } : {}),
    };
  }

  /**
   * The conversation as its client saw it through turn `seq` (its user message and reply
   * included), or null when that turn did not complete.
   */
  turnsThrough(seq: number): ChatMessage[] | null {
    if (this.inbox.get(seq)?.status !== "completed") return null;
    const conversation = this.transcript.conversationOf(seq);
    return conversation === null ? null : this.transcript.visibleTurns(conversation, seq);
  }

  /**
   * Whether turn `seq` completed and still ends this idle session's current conversation as its
   * client saw it (no visible turn after it): a continuation by reference, nothing compared.
   */
  endsConversation(seq: number): boolean {
    const claim = this.claims.state();
    if (claim.seq !== null || this.inbox.waitingCount() > 0) return false;
    if (this.inbox.get(seq)?.status !== "completed") return false;
    if (this.transcript.conversationOf(seq) !== claim.conversation) return false;
    return this.transcript.visibleTurns(claim.conversation, Number.MAX_SAFE_INTEGER, seq)
      .length === 0;
  }

  /** Whether `seed` is exactly this idle session's current conversation, as its client saw it. */
  continues(seed: ChatMessage[]): boolean {
    const claim = this.claims.state();
    if (claim.seq !== null || this.inbox.waitingCount() > 0) return false;
    const turns = this.transcript.visibleTurns(claim.conversation);
    return turns.length === seed.length &&
      turns.every((t, i) => t.role === seed[i].role && t.content === messageText(seed[i]));
  }
}

/** A run's state from its inbox status and outcome ("done": settled now). */
export function runStateOf(status: string, outcome: TurnOutcome | null): RunState {
  if (status === "queued" || status === "merged") return { status: "queued" };
  if (status === "waiting") return { status: "waiting_for_approval" };
  if (status === "running" || status === "delivering" || !outcome) return { status: "running" };
  if (outcome.status === "completed") return { status: "completed", output: outcome.reply };
  return { status: isStopped(outcome.error) ? "cancelled" : "failed", error: outcome.error };
}

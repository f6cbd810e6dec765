// One session's durable inbox, run claim and transcript over Durable Object SQLite; runtime-neutral (storage is passed in).
import { type ChatMessage, ModelError } from "./chat_model.ts";
import type { ReplyChannel, ReplyTarget } from "./platform.ts";
import { type Transport, TransportTee } from "./transport.ts";
import {
  HELP_TEXT,
  newConversationText,
  parseCommand,
  QUEUE_FULL_NOTICE,
  QUEUED_NOTICE,
  type SessionCommand,
  START_TEXT,
  statusText,
  stopText,
  unknownCommandText,
} from "./session_commands.ts";
import type { ContextFields } from "./session_context.ts";

/** The subset of DurableObjectStorage the sentinel uses. */
export interface SentinelStorage {
  sql: {
    exec(query: string, ...bindings: (string | number | null)[]): {
      toArray(): Record<string, unknown>[];
    };
  };
  transactionSync<T>(fn: () => T): T;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** A message handed to a session. */
export interface InboundMessage {
  text: string;
  /** The source's delivery id (webhook-id, update_id, …): a repeat within 24 h never starts a second turn. */
  deliveryKey?: string;
  /** The turn context to bind when this message runs. */
  context: Omit<ContextFields, "async_delivery">;
  /** Extra system prompt for this turn (e.g. an API caller's system message). */
  system?: string;
  /** Earlier messages that seed the conversation when it has no history yet. */
  seed?: ChatMessage[];
  /** Where the reply is sent (chat platforms); without it the caller collects the outcome. */
  reply?: ReplyTarget;
  /** Whether a text starting with "/" is a command (chat platforms, generic webhook). */
  commands?: boolean;
  /** Record the run's events (runs API, streaming completions): kept durably, readable live. */
  events?: boolean;
}

/** One event of a run, as stored and streamed. */
export interface RunEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A run's state as the runs API reports it. */
export interface RunState {
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  output?: string;
  error?: { message: string; type: string };
}

const _FINAL_EVENTS = new Set(["run.completed", "run.failed", "run.cancelled"]);

/** How a message's turn ended. */
export type TurnOutcome =
  | {
    status: "completed";
    reply: string;
    usage: { prompt_tokens: number; completion_tokens: number };
  }
  | { status: "failed"; error: { message: string; type: string } };

/** What `submit` answers once the message is durably stored. */
export interface SubmitReceipt {
  seq: number;
  duplicate: boolean;
  /** Set when the message was not stored: the session already has `maxQueued` messages waiting. */
  refused?: "queue_full";
  /** A short text for the chat user now: a command's answer, the queued notice, the refusal. */
  notice?: string;
}

/** What the session does with a message that arrives while a turn runs. */
export type BusyMode = "queue" | "interrupt" | "merge";

/** A running turn's progress, updated by the executor as it goes. */
export interface TurnProgress {
  /** Model calls started so far (0: still starting). */
  step: number;
  /** The turn's messages so far (user, assistant, tool), kept if the turn is interrupted. */
  messages: ChatMessage[];
  /** Records a run event (message.delta, tool.started, tool.completed) when the message asked for events. */
  emit?: (type: string, data: Record<string, unknown>) => void;
}

/** A session's state as the sessions API reports it. */
export interface SessionSnapshot {
  running: boolean;
  queued: number;
  messages: { role: string; content: string }[];
}

/** Runs one claimed message as a turn; throws to fail it. */
export type TurnExecutor = (
  message: InboundMessage,
  history: ChatMessage[],
  signal: AbortSignal,
  progress: TurnProgress,
) => Promise<
  {
    reply: string;
    messages: ChatMessage[];
    usage: { prompt_tokens: number; completion_tokens: number };
  }
>;

/** Tunables of a sentinel. */
export interface SentinelOptions {
  /** Most recent transcript messages a turn sees. */
  historyWindow: number;
  /** A turn is aborted and failed after this long. */
  turnTimeoutMs: number;
  /** The watchdog alarm fires this long after a claim while a turn runs, to recover a dead executor. */
  leaseMs: number;
  /** An interrupted message runs again at most this many times in all. */
  maxAttempts: number;
  /** After this long in one alarm, the drain hands over to a fresh alarm. */
  drainBudgetMs: number;
  /** Sends replies of messages that carry a reply target. */
  channel?: ReplyChannel;
  /** Busy-input policy; default "queue". */
  busyMode?: BusyMode;
  /** Most messages waiting per session; one more is refused. Default 32. */
  maxQueued?: number;
  /** Whether chat users get the queued notice (at most once per 30 s). Default true. */
  busyNotice?: boolean;
  /** Longest wait for one part's send, Retry-After included, before giving up on it. */
  maxSendWaitMs?: number;
  now?: () => number;
}

const _DEDUP_MS = 24 * 60 * 60 * 1000;

const _SCHEMA = [
  `CREATE TABLE IF NOT EXISTS inbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_key TEXT UNIQUE,
    received_at INTEGER NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    attempts INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    finished_at INTEGER,
    merged_into INTEGER
  )`,
  `CREATE INDEX IF NOT EXISTS inbox_status ON inbox (status, seq)`,
  `CREATE INDEX IF NOT EXISTS inbox_received ON inbox (received_at)`,
  // The prune after every turn seeks finished rows without a delivery key: without this index
  // SQLite walks every such row through the unique index on delivery_key.
  `CREATE INDEX IF NOT EXISTS inbox_prune ON inbox (delivery_key, finished_at)`,
  `CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL,
    seq INTEGER,
    started_at INTEGER,
    conversation INTEGER NOT NULL DEFAULT 0,
    notice_at INTEGER NOT NULL DEFAULT 0
  )`,
  `INSERT OR IGNORE INTO run (id, generation, seq, started_at, conversation) VALUES (1, 0, NULL, NULL, 0)`,
  `CREATE TABLE IF NOT EXISTS transcript (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS transcript_conversation ON transcript (conversation, id)`,
  `CREATE TABLE IF NOT EXISTS run_events (
    seq INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (seq, idx)
  )`,
  `CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER NOT NULL,
    part INTEGER NOT NULL,
    count INTEGER NOT NULL,
    text TEXT NOT NULL,
    sent_at INTEGER,
    error TEXT,
    attempted_at INTEGER,
    PRIMARY KEY (seq, part)
  )`,
];

/** Columns added after a table's first release: added to older databases when missing. */
const _ADDED_COLUMNS = [{ table: "outbox", column: "attempted_at", type: "INTEGER" }];

const _UNCONFIRMED_SEND =
  "not resent: an earlier send of this part was cut off before its answer was recorded";

/** The text a chat user gets when their turn failed. */
export function failureNotice(error: { message: string }): string {
  return `Sorry, I could not answer that: ${error.message}.`;
}

interface _Claim {
  seq: number;
  generation: number;
  conversation: number;
  message: InboundMessage;
}

/**
 * The session's sentinel: one turn at a time, messages in arrival order, nothing lost or run twice.
 * The claim is a row in `run`, taken synchronously before any await; the alarm drains the inbox.
 */
export class SessionSentinel {
  readonly #storage: SentinelStorage;
  readonly #execute: TurnExecutor;
  readonly #options: SentinelOptions;
  readonly #now: () => number;
  readonly #waiters = new Map<number, ((outcome: TurnOutcome) => void)[]>();
  /** True while this instance's executor is alive; lost with the instance, which is the point. */
  #draining = false;
  /** The turn this instance is running now. */
  #current: {
    claim: _Claim;
    controller: AbortController;
    progress: TurnProgress;
    startedAt: number;
  } | null = null;

  constructor(storage: SentinelStorage, execute: TurnExecutor, options: SentinelOptions) {
    this.#storage = storage;
    this.#execute = execute;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    for (const statement of _SCHEMA) storage.sql.exec(statement);
    for (const { table, column, type } of _ADDED_COLUMNS) {
      const has = storage.sql.exec(
        `SELECT 1 FROM pragma_table_info('${table}') WHERE name = '${column}'`,
      ).toArray().length;
      if (!has) storage.sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
  }

  /**
   * Stores a message durably (or finds its earlier delivery) and makes sure the drain will see it.
   * Commands are answered here, at once; a busy session queues, interrupts or merges by policy.
   */
  async submit(message: InboundMessage): Promise<SubmitReceipt> {
    const now = this.#now();
    const parsed = message.commands ? parseCommand(message.text) : null;
    const receipt = this.#storage.transactionSync((): SubmitReceipt => {
      if (message.deliveryKey !== undefined) {
        this.#sql(
          `UPDATE inbox SET delivery_key = NULL WHERE delivery_key IS NOT NULL AND received_at < ?`,
          now - _DEDUP_MS,
        );
        const seen =
          this.#sql(`SELECT seq FROM inbox WHERE delivery_key = ?`, message.deliveryKey)[0];
        if (seen) return { seq: Number(seen.seq), duplicate: true };
      }
      if (parsed) {
        const reply = this.#runCommand(parsed.command, parsed.word);
        const outcome: TurnOutcome = {
          status: "completed",
          reply,
          usage: { prompt_tokens: 0, completion_tokens: 0 },
        };
        const seq = this.#insert(message, now, "command", outcome);
        return { seq, duplicate: false, notice: reply };
      }
      const run = this.#run();
      const queued = this.#queuedCount();
      const busy = run.seq !== null || queued > 0;
      const mode = this.#options.busyMode ?? "queue";
      if (busy && mode === "merge" && run.seq !== null && !message.events) {
        const target = this.#sql(
          `SELECT seq, message FROM inbox WHERE status = 'queued' ORDER BY seq DESC LIMIT 1`,
        )[0];
        if (target) {
          const merged = JSON.parse(String(target.message)) as InboundMessage;
          const next: InboundMessage = {
            ...message,
            text: `${merged.text}\n${message.text}`,
            deliveryKey: merged.deliveryKey,
          };
          this.#sql(
            `UPDATE inbox SET message = ? WHERE seq = ?`,
            JSON.stringify(next),
            Number(target.seq),
          );
          const seq = this.#insert(message, now, "merged", null, Number(target.seq));
          return { seq, duplicate: false, notice: this.#busyNotice(message, now) };
        }
      }
      if (queued >= (this.#options.maxQueued ?? 32)) {
        return { seq: 0, duplicate: false, refused: "queue_full", notice: QUEUE_FULL_NOTICE };
      }
      const seq = this.#insert(message, now, "queued", null);
      if (message.events) this.#emit(seq, "run.queued", {});
      if (busy && mode === "interrupt" && run.seq !== null) {
        this.#endCurrent("interrupted", "interrupted by a newer message");
        return { seq, duplicate: false };
      }
      return { seq, duplicate: false, ...(busy ? { notice: this.#busyNotice(message, now) } : {}) };
    });
    this.#afterTransaction();
    // Also for a duplicate: a sender retrying after a restart wakes the recovery of its message.
    if (!this.#draining && !receipt.refused) await this.#storage.setAlarm(now);
    if (receipt.notice === undefined) delete receipt.notice;
    return receipt;
  }

  /** Stops the running turn and drops the waiting messages (`stop`), then starts a new conversation (`new`). */
  async control(
    command: "stop" | "new",
  ): Promise<{ reply: string; stopped: boolean; dropped: number }> {
    const result = this.#storage.transactionSync(() => this.#stopAll(command === "new"));
    this.#afterTransaction();
    if (!this.#draining) await this.#storage.setAlarm(this.#now());
    return {
      ...result,
      reply: command === "new"
        ? newConversationText(result.stopped)
        : stopText(result.stopped, result.dropped),
    };
  }

  /** Resolves with the outcome of message `seq` once its turn has ended. */
  outcome(seq: number): Promise<TurnOutcome> {
    const row = this.#sql(`SELECT status, outcome, merged_into FROM inbox WHERE seq = ?`, seq)[0];
    if (row?.status === "merged") return this.outcome(Number(row.merged_into));
    if (!row) {
      return Promise.resolve({
        status: "failed",
        error: { message: "unknown message", type: "not_found" },
      });
    }
    if (row.outcome && row.status !== "delivering") {
      return Promise.resolve(JSON.parse(String(row.outcome)) as TurnOutcome);
    }
    return new Promise((resolve) => {
      const list = this.#waiters.get(seq) ?? [];
      list.push(resolve);
      this.#waiters.set(seq, list);
    });
  }

  /** A run's state, or null when there is no such message. */
  runState(seq: number): RunState | null {
    const row = this.#sql(`SELECT status, outcome FROM inbox WHERE seq = ?`, seq)[0];
    if (!row) return null;
    const outcome = row.outcome ? JSON.parse(String(row.outcome)) as TurnOutcome : null;
    return _runState(String(row.status), outcome);
  }

  /**
   * Sends a run's events to `transport`: every stored event first, in order, then the live ones;
   * closes it after the final event. Returns false when there is no such run.
   */
  subscribe(seq: number, transport: Transport<RunEvent>): boolean {
    const run = this.#sql(`SELECT message FROM inbox WHERE seq = ?`, seq)[0];
    if (!run || !(JSON.parse(String(run.message)) as InboundMessage).events) return false;
    const rows = this.#sql(`SELECT type, data FROM run_events WHERE seq = ? ORDER BY idx`, seq);
    for (const row of rows) {
      if (!transport.write({ type: String(row.type), data: JSON.parse(String(row.data)) })) {
        return true;
      }
    }
    if (rows.some((row) => _FINAL_EVENTS.has(String(row.type)))) {
      transport.close();
      return true;
    }
    this.#tee(seq).add(transport);
    return true;
  }

  /** Stops one run: the running turn, or a waiting message. Returns false when it had already ended. */
  cancelRun(seq: number): boolean {
    const stopped = this.#storage.transactionSync(() => {
      if (this.#run().seq === seq) return this.#endCurrent("cancelled", "stopped");
      const row = this.#sql(`SELECT status FROM inbox WHERE seq = ?`, seq)[0];
      if (row?.status !== "queued") return false;
      const outcome: TurnOutcome = {
        status: "failed",
        error: { message: "the run was stopped", type: "cancelled" },
      };
      this.#finishRow(seq, outcome);
      this.#pending.push({ seq, outcome });
      return true;
    });
    this.#afterTransaction();
    return stopped;
  }

  /** The session's state: whether a turn runs, how many messages wait, the current conversation. */
  snapshot(): SessionSnapshot {
    const run = this.#run();
    const queued = this.#queuedCount();
    const messages = this.#sql(
      `SELECT role, message FROM transcript WHERE conversation = ? ORDER BY id`,
      run.conversation,
    ).map((row) => {
      const message = JSON.parse(String(row.message)) as { content?: unknown };
      return {
        role: String(row.role),
        content: typeof message.content === "string" ? message.content : "",
      };
    });
    return { running: run.seq !== null, queued, messages };
  }

  /**
   * The alarm's work: recover a claim whose executor died, then run queued messages one at a
   * time in arrival order. A second drain while one is alive only re-arms the watchdog.
   */
  async drain(): Promise<void> {
    if (this.#draining) {
      await this.#storage.setAlarm(this.#now() + this.#options.leaseMs);
      return;
    }
    this.#draining = true;
    const started = this.#now();
    try {
      const resumed = this.#recoverOrphanedClaim();
      if (resumed) {
        await this.#storage.setAlarm(this.#now() + this.#options.leaseMs);
        await this.#deliverAndRelease(resumed);
      }
      for (;;) {
        const claim = this.#claimNext();
        if (!claim) break;
        await this.#storage.setAlarm(this.#now() + this.#options.leaseMs);
        await this.#runClaim(claim);
        if (this.#now() - started > this.#options.drainBudgetMs) {
          await this.#storage.setAlarm(this.#now());
          break;
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  #queuedCount(): number {
    return Number(
      this.#sql(`SELECT count(*) AS n FROM inbox WHERE status IN ('queued', 'merged')`)[0].n,
    );
  }

  #insert(
    message: InboundMessage,
    now: number,
    status: "queued" | "merged" | "command",
    outcome: TurnOutcome | null,
    mergedInto: number | null = null,
  ): number {
    const row = this.#sql(
      `INSERT INTO inbox (delivery_key, received_at, message, status, outcome, finished_at, merged_into)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      message.deliveryKey ?? null,
      now,
      JSON.stringify(message),
      status,
      outcome ? JSON.stringify(outcome) : null,
      outcome ? now : null,
      mergedInto,
    )[0];
    return Number(row.seq);
  }

  /** The queued notice for a chat user, at most once per 30 s per session (inside a transaction). */
  #busyNotice(message: InboundMessage, now: number): string | undefined {
    if (!message.reply || this.#options.busyNotice === false) return undefined;
    if (now - Number(this.#sql(`SELECT notice_at FROM run WHERE id = 1`)[0].notice_at) < 30_000) {
      return undefined;
    }
    this.#sql(`UPDATE run SET notice_at = ? WHERE id = 1`, now);
    return QUEUED_NOTICE;
  }

  /** A command's answer; /stop and /new change state (inside a transaction). */
  #runCommand(command: SessionCommand, word: string): string {
    switch (command) {
      case "status": {
        const run = this.#run();
        const current = this.#current && this.#holds(this.#current.claim) ? this.#current : null;
        return statusText({
          running: run.seq !== null,
          runningForMs: current ? this.#now() - current.startedAt : 0,
          step: current?.progress.step ?? 0,
          queued: this.#queuedCount(),
        });
      }
      case "stop": {
        const { stopped, dropped } = this.#stopAll(false);
        return stopText(stopped, dropped);
      }
      case "new":
        return newConversationText(this.#stopAll(true).stopped);
      case "help":
        return HELP_TEXT;
      case "start":
        return START_TEXT;
      case "unknown":
        return unknownCommandText(word);
    }
  }

  /** Ends the running turn and cancels every waiting message; `fresh` also starts a new conversation. */
  #stopAll(fresh: boolean): { stopped: boolean; dropped: number } {
    const stopped = this.#endCurrent("cancelled", "stopped");
    const waiting = this.#sql(
      `SELECT seq FROM inbox WHERE status IN ('queued', 'merged') ORDER BY seq`,
    );
    const outcome: TurnOutcome = {
      status: "failed",
      error: { message: "cancelled by /stop", type: "cancelled" },
    };
    for (const row of waiting) {
      this.#finishRow(Number(row.seq), outcome);
      this.#pending.push({ seq: Number(row.seq), outcome });
    }
    if (fresh) this.#sql(`UPDATE run SET conversation = conversation + 1 WHERE id = 1`);
    return { stopped, dropped: waiting.length };
  }

  /**
   * Ends the claimed turn now (inside a transaction): keeps its partial work in the transcript
   * marked, fails its message with `type`, bumps the generation so its late end changes nothing,
   * and releases the claim. Returns whether there was one.
   */
  #endCurrent(type: "cancelled" | "interrupted", why: string): boolean {
    const run = this.#run();
    if (run.seq === null) return false;
    const current = this.#current && this.#holds(this.#current.claim) ? this.#current : null;
    const row = this.#sql(`SELECT status, outcome FROM inbox WHERE seq = ?`, run.seq)[0];
    let outcome: TurnOutcome = {
      status: "failed",
      error: { message: `the turn was ${why}`, type },
    };
    if (row?.status === "delivering") {
      outcome = JSON.parse(String(row.outcome)) as TurnOutcome;
    } else if (current && current.progress.messages.length) {
      for (
        const message of [..._pairedPrefix(current.progress.messages), _interruptedMarker(why)]
      ) {
        this.#appendTranscript(run.conversation, run.seq, message);
      }
    }
    this.#sql(`UPDATE run SET generation = generation + 1 WHERE id = 1`);
    this.#release(run.seq, outcome);
    this.#pending.push({ seq: run.seq, outcome });
    if (current) this.#toAbort.push({ controller: current.controller, why });
    return true;
  }

  /** Outcomes settled inside a transaction, announced to waiters once it committed. */
  #pending: { seq: number; outcome: TurnOutcome }[] = [];
  /** Turns ended inside a transaction, aborted once it committed. */
  #toAbort: { controller: AbortController; why: string }[] = [];

  #afterTransaction(): void {
    const pending = this.#pending;
    const toAbort = this.#toAbort;
    this.#pending = [];
    this.#toAbort = [];
    for (const { controller, why } of toAbort) controller.abort(new Error(`turn ${why}`));
    for (const { seq, outcome } of pending) this.#notify(seq, outcome);
  }

  #appendTranscript(conversation: number, seq: number, message: ChatMessage): void {
    this.#sql(
      `INSERT INTO transcript (conversation, seq, role, message, created_at) VALUES (?, ?, ?, ?, ?)`,
      conversation,
      seq,
      message.role,
      JSON.stringify(message),
      this.#now(),
    );
  }

  #sql(query: string, ...bindings: (string | number | null)[]): Record<string, unknown>[] {
    return this.#storage.sql.exec(query, ...bindings).toArray();
  }

  #run(): { generation: number; seq: number | null; conversation: number } {
    const row = this.#sql(`SELECT generation, seq, conversation FROM run WHERE id = 1`)[0];
    return {
      generation: Number(row.generation),
      seq: row.seq === null ? null : Number(row.seq),
      conversation: Number(row.conversation),
    };
  }

  /**
   * Only called when no executor of this instance is alive: any claim left is a dead executor's.
   * A turn that died before its end runs again; one that died while sending resumes the sending.
   */
  #recoverOrphanedClaim(): _Claim | null {
    const recovered = this.#storage.transactionSync(() => {
      const run = this.#run();
      if (run.seq === null) return null;
      const row = this.#sql(
        `SELECT status, attempts, message, outcome FROM inbox WHERE seq = ? AND status IN ('running', 'delivering')`,
        run.seq,
      )[0];
      const generation = run.generation + 1;
      if (row?.status === "delivering" && Number(row.attempts) < this.#options.maxAttempts) {
        this.#sql(
          `UPDATE run SET generation = ?, started_at = ? WHERE id = 1`,
          generation,
          this.#now(),
        );
        this.#sql(`UPDATE inbox SET attempts = attempts + 1 WHERE seq = ?`, run.seq);
        const message = JSON.parse(String(row.message)) as InboundMessage;
        return { claim: { seq: run.seq, generation, conversation: run.conversation, message } };
      }
      this.#sql(
        `UPDATE run SET seq = NULL, started_at = NULL, generation = ? WHERE id = 1`,
        generation,
      );
      if (!row) return null;
      if (row.status === "running" && Number(row.attempts) < this.#options.maxAttempts) {
        this.#sql(`UPDATE inbox SET status = 'queued' WHERE seq = ?`, run.seq);
        return null;
      }
      const outcome: TurnOutcome = row.status === "delivering"
        ? JSON.parse(String(row.outcome)) as TurnOutcome
        : {
          status: "failed",
          error: {
            message: `the turn was interrupted ${row.attempts} times; giving up`,
            type: "turn_interrupted",
          },
        };
      this.#finishRow(run.seq, outcome);
      return { finished: { seq: run.seq, outcome } };
    });
    if (recovered?.finished) this.#notify(recovered.finished.seq, recovered.finished.outcome);
    return recovered?.claim ?? null;
  }

  #claimNext(): _Claim | null {
    return this.#storage.transactionSync(() => {
      const run = this.#run();
      if (run.seq !== null) return null;
      const row =
        this.#sql(`SELECT seq, message FROM inbox WHERE status = 'queued' ORDER BY seq LIMIT 1`)[0];
      if (!row) return null;
      const seq = Number(row.seq);
      const generation = run.generation + 1;
      this.#sql(
        `UPDATE run SET seq = ?, generation = ?, started_at = ? WHERE id = 1`,
        seq,
        generation,
        this.#now(),
      );
      this.#sql(`UPDATE inbox SET status = 'running', attempts = attempts + 1 WHERE seq = ?`, seq);
      const message = JSON.parse(String(row.message)) as InboundMessage;
      if (message.events) this.#emit(seq, "run.started", {});
      return { seq, generation, conversation: run.conversation, message };
    });
  }

  async #runClaim(claim: _Claim): Promise<void> {
    if (!this.#holds(claim)) return; // stopped before it started
    const history = this.#history(claim.conversation);
    const seed = history.length === 0 ? (claim.message.seed ?? []) : [];
    const controller = new AbortController();
    const signal = AbortSignal.any([
      controller.signal,
      AbortSignal.timeout(this.#options.turnTimeoutMs),
    ]);
    const progress: TurnProgress = { step: 0, messages: [] };
    if (claim.message.events) {
      // Only the current claim may add events: a stopped run's late events go nowhere.
      progress.emit = (type, data) => {
        if (this.#holds(claim)) this.#emit(claim.seq, type, data);
      };
    }
    this.#current = { claim, controller, progress, startedAt: this.#now() };
    let outcome: TurnOutcome;
    let messages: ChatMessage[] = [];
    try {
      // The race frees the drain at once when the turn is stopped, even if the executor ignores its signal.
      const result = await _race(
        this.#execute(claim.message, seed.length ? seed : history, signal, progress),
        signal,
      );
      outcome = { status: "completed", reply: result.reply, usage: result.usage };
      messages = [...seed, ...result.messages];
    } catch (error) {
      outcome = { status: "failed", error: _describeFailure(error, signal) };
      // Partial work is kept (marked) only when the turn timed out; a stop wrote its own record.
      if (outcome.error.type === "turn_timeout" && this.#holds(claim)) {
        messages = [..._pairedPrefix(progress.messages), _interruptedMarker(outcome.error.message)];
      }
    } finally {
      if (this.#current?.claim === claim) this.#current = null;
    }
    const target = this.#options.channel ? claim.message.reply : undefined;
    const written = this.#storage.transactionSync(() => {
      if (!this.#holds(claim)) return false;
      for (const message of messages) {
        this.#appendTranscript(claim.conversation, claim.seq, message);
      }
      if (target) {
        const text = outcome.status === "completed" ? outcome.reply : failureNotice(outcome.error);
        const parts = this.#options.channel!.split(target, text);
        for (const [part, partText] of parts.entries()) {
          this.#sql(
            `INSERT OR IGNORE INTO outbox (seq, part, count, text) VALUES (?, ?, ?, ?)`,
            claim.seq,
            part,
            parts.length,
            partText,
          );
        }
        this.#sql(
          `UPDATE inbox SET status = 'delivering', outcome = ? WHERE seq = ?`,
          JSON.stringify(outcome),
          claim.seq,
        );
        return true;
      }
      this.#release(claim.seq, outcome);
      return true;
    });
    if (!written) return;
    if (target) await this.#deliverAndRelease(claim);
    else this.#notify(claim.seq, outcome);
  }

  /** Sends the unsent parts of a claimed message's reply in order, then releases the claim. */
  async #deliverAndRelease(claim: _Claim): Promise<void> {
    const controller = new AbortController();
    this.#current = {
      claim,
      controller,
      progress: { step: 0, messages: [] },
      startedAt: this.#now(),
    };
    try {
      await this.#deliverParts(claim, controller.signal);
    } finally {
      if (this.#current?.claim === claim) this.#current = null;
    }
  }

  async #deliverParts(claim: _Claim, signal: AbortSignal): Promise<void> {
    const target = claim.message.reply;
    const channel = this.#options.channel;
    const parts = this.#sql(
      `SELECT part, count, text, attempted_at FROM outbox WHERE seq = ? AND sent_at IS NULL ORDER BY part`,
      claim.seq,
    );
    for (const row of parts) {
      if (!target || !channel || !this.#holds(claim)) break;
      const part = { index: Number(row.part), count: Number(row.count) };
      if (row.attempted_at !== null) {
        // A dead executor sent this part and never learned the answer: it may be in the chat
        // already, and a reply shown twice is worse than one part missing. Never resent.
        this.#sql(
          `UPDATE outbox SET error = ? WHERE seq = ? AND part = ?`,
          _UNCONFIRMED_SEND,
          claim.seq,
          part.index,
        );
        console.error(
          "reply part not resent",
          target.platform,
          `part ${part.index + 1}/${part.count}:`,
          _UNCONFIRMED_SEND,
        );
        continue;
      }
      const attempt = (sending: boolean) =>
        this.#sql(
          `UPDATE outbox SET attempted_at = ? WHERE seq = ? AND part = ?`,
          sending ? this.#now() : null,
          claim.seq,
          part.index,
        );
      let error: string | null;
      try {
        error = await _race(
          this.#sendPart(channel, target, String(row.text), part, attempt),
          signal,
        );
      } catch {
        return; // stopped while sending
      }
      if (!this.#holds(claim)) return;
      this.#sql(
        `UPDATE outbox SET sent_at = ?, error = ? WHERE seq = ? AND part = ?`,
        error ? null : this.#now(),
        error,
        claim.seq,
        part.index,
      );
      if (error) {
        console.error(
          "reply not delivered",
          target.platform,
          `part ${part.index + 1}/${part.count}:`,
          error,
        );
        break;
      }
    }
    const outcome = this.#storage.transactionSync(() => {
      if (!this.#holds(claim)) return null;
      const row = this.#sql(`SELECT outcome FROM inbox WHERE seq = ?`, claim.seq)[0];
      const stored = JSON.parse(String(row.outcome)) as TurnOutcome;
      this.#release(claim.seq, stored);
      return stored;
    });
    if (outcome) this.#notify(claim.seq, outcome);
  }

  /**
   * One part, waiting out 429s (Retry-After) within maxSendWaitMs; returns the error, or null
   * when sent. `attempt(true)` is stored before each send (the write is durable before the
   * request leaves: the output gate holds it), `attempt(false)` once an answer says nothing was
   * posted, so a crash in between is the only way a part is left "attempted".
   */
  async #sendPart(
    channel: ReplyChannel,
    target: ReplyTarget,
    text: string,
    part: { index: number; count: number },
    attempt: (sending: boolean) => void,
  ): Promise<string | null> {
    let waited = 0;
    for (let tries = 0;; tries++) {
      attempt(true);
      let result;
      try {
        result = await channel.send(target, text, part);
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      if (result.ok) return null;
      const wait = result.retryAfterMs ?? Math.min(500 * 2 ** tries, 8_000);
      if (!result.retryable || waited + wait > (this.#options.maxSendWaitMs ?? 120_000)) {
        return result.message;
      }
      attempt(false);
      waited += wait;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Whether `claim` is still the session's current claim (no stop, no recovery took over). */
  #holds(claim: _Claim): boolean {
    const run = this.#run();
    return run.generation === claim.generation && run.seq === claim.seq;
  }

  /** Stores the outcome, releases the claim and prunes old finished rows: one synchronous section. */
  #release(seq: number, outcome: TurnOutcome): void {
    this.#finishRow(seq, outcome);
    this.#sql(`UPDATE run SET seq = NULL, started_at = NULL WHERE id = 1`);
    const cutoff = this.#now() - _DEDUP_MS;
    this.#sql(
      `DELETE FROM outbox WHERE seq IN (SELECT seq FROM inbox WHERE finished_at < ? AND delivery_key IS NULL)`,
      cutoff,
    );
    this.#sql(
      `DELETE FROM run_events WHERE seq IN (SELECT seq FROM inbox WHERE finished_at < ? AND delivery_key IS NULL)`,
      cutoff,
    );
    this.#sql(`DELETE FROM inbox WHERE finished_at < ? AND delivery_key IS NULL`, cutoff);
  }

  #finishRow(seq: number, outcome: TurnOutcome): void {
    const row = this.#sql(
      `UPDATE inbox SET status = ?, outcome = ?, finished_at = ? WHERE seq = ? RETURNING message`,
      outcome.status,
      JSON.stringify(outcome),
      this.#now(),
      seq,
    )[0];
    if (!row || !(JSON.parse(String(row.message)) as InboundMessage).events) return;
    const state = _runState("done", outcome);
    if (state.status === "completed") this.#emit(seq, "run.completed", { output: state.output });
    else if (state.status === "cancelled") this.#emit(seq, "run.cancelled", {});
    else this.#emit(seq, "run.failed", { error: state.error });
  }

  /**
   * Appends a run event to the durable log (the tee's primary) and to its live subscribers.
   * A final event closes the subscribers.
   */
  #emit(seq: number, type: string, data: Record<string, unknown>): void {
    const tee = this.#tee(seq);
    tee.write({ type, data });
    if (_FINAL_EVENTS.has(type)) {
      this.#tees.delete(seq);
      tee.close();
    }
  }

  /** The run's tee: the durable log as primary, live subscribers as secondaries. */
  #tee(seq: number): TransportTee<RunEvent> {
    let tee = this.#tees.get(seq);
    if (!tee) {
      tee = new TransportTee<RunEvent>(this.#eventLog(seq));
      this.#tees.set(seq, tee);
    }
    return tee;
  }

  #eventLog(seq: number): Transport<RunEvent> {
    return {
      write: (event) => {
        this.#sql(
          `INSERT INTO run_events (seq, idx, type, data)
           VALUES (?, (SELECT coalesce(max(idx), -1) + 1 FROM run_events WHERE seq = ?), ?, ?)`,
          seq,
          seq,
          event.type,
          JSON.stringify(event.data),
        );
        return true;
      },
      close: () => {},
    };
  }

  readonly #tees = new Map<number, TransportTee<RunEvent>>();

  #notify(seq: number, outcome: TurnOutcome): void {
    const list = this.#waiters.get(seq);
    this.#waiters.delete(seq);
    for (const resolve of list ?? []) resolve(outcome);
  }

  /** The most recent `historyWindow` messages, starting at a user message so tool results stay paired. */
  #history(conversation: number): ChatMessage[] {
    const rows = this.#sql(
      `SELECT role, message FROM transcript WHERE conversation = ? ORDER BY id DESC LIMIT ?`,
      conversation,
      this.#options.historyWindow,
    ).reverse();
    const start = rows.findIndex((row) => row.role === "user");
    if (start < 0) return [];
    return rows.slice(start).map((row) => JSON.parse(String(row.message)) as ChatMessage);
  }
}

function _runState(status: string, outcome: TurnOutcome | null): RunState {
  if (status === "queued" || status === "merged") return { status: "queued" };
  if (status === "running" || status === "delivering" || !outcome) return { status: "running" };
  if (outcome.status === "completed") return { status: "completed", output: outcome.reply };
  const cancelled = outcome.error.type === "cancelled" || outcome.error.type === "interrupted";
  return { status: cancelled ? "cancelled" : "failed", error: outcome.error };
}

/** Resolves or rejects with `promise`, or rejects as soon as `signal` aborts. */
function _race<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The longest prefix in which every assistant tool call has its result, so history stays valid. */
function _pairedPrefix(messages: ChatMessage[]): ChatMessage[] {
  let end = 0;
  let open = 0;
  for (const [i, message] of messages.entries()) {
    if (message.role === "assistant") open = message.tool_calls?.length ?? 0;
    else if (message.role === "tool") open--;
    if (open <= 0) end = i + 1;
  }
  return messages.slice(0, end);
}

function _interruptedMarker(why: string): ChatMessage {
  return { role: "assistant", content: `(interrupted: ${why})` };
}

function _describeFailure(error: unknown, signal: AbortSignal): { message: string; type: string } {
  if (signal.aborted && !(signal.reason instanceof Error && /^turn /.test(signal.reason.message))) {
    return { message: "the turn timed out", type: "turn_timeout" };
  }
  if (error instanceof ModelError) {
    return { message: `model call failed: ${error.message}`, type: "model_error" };
  }
  return { message: "the turn failed", type: "turn_error" };
}

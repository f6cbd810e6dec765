// The session Durable Object: a thin Workers shell over lib/session/ (the sentinel); Workers (cloudflare:workers).
import { DurableObject } from "cloudflare:workers";
import type { BatonConfig, Deployment } from "../lib/deployment/mod.ts";
import type { ChatMessage } from "../lib/agent/mod.ts";
import {
  type ApprovalAnswer,
  newConversationText,
  type PlatformAdapter,
  stopText,
} from "../lib/chat/mod.ts";
import { isResponseMeta } from "../lib/openai/mod.ts";
import {
  type ContextFields,
  errorText,
  log,
  ndjsonTransport,
  setLogLevel,
  withSessionContext,
} from "../lib/runtime/mod.ts";
import {
  holdsSession,
  inspectSession,
  type SessionInspection,
} from "../lib/session/session_inspector.ts";
import { eraseSession, type Erasure, sessionOpen } from "../lib/session/erase_session.ts";
import { ResponseDeletions } from "../lib/session/response_deletions.ts";
import type {
  ApprovalChoice,
  InboundMessage,
  JobAnswer,
  JobRequest,
  MessageRecord,
  RunEvent,
  RunState,
  SessionSentinel,
  SessionSnapshot,
  SubmitReceipt,
  TurnOutcome,
} from "../lib/session/mod.ts";
import type { Env } from "./env.ts";
import { buildSessionSentinel } from "./_session_sentinel.ts";
import { chatAdapters } from "./_chat_adapters.ts";
import { admitTenantSession } from "./_tenant_caps.ts";
import { emptyDayUsage, type SessionDayUsage } from "../lib/session/session_usage.ts";

/**
 * One per session key (idFromName): durable inbox, run claim, transcript, outbox, and nothing
 * else (conversation pointers and Idempotency-Key records are objects of their own classes:
 * conversation_pointer_do.ts, idempotency_key_do.ts). Each deployment exports its own subclass,
 * made by `defineBaton` (define_baton.ts), which hands it the deployment (tools, prompts).
 */
export class SessionDO extends DurableObject<Env> {
  readonly #deployment: Deployment;
  readonly #config: BatonConfig;
  #built: SessionSentinel | null = null;
  /** The erasure running now (`erase`): every other entry is refused until it ends. */
  #erasing: Promise<Erasure> | null = null;
  /** The responses deleted through the API (`deleteResponse`), kept in this object's storage. */
  readonly #deletions: ResponseDeletions;
  /** Every adapter a reply may go out through, loaded before the object's first request. */
  #adapters: readonly PlatformAdapter[] = [];

  constructor(ctx: DurableObjectState, env: Env, deployment: Deployment) {
    // The env as every part of the object reads it: the code's setting defaults under it.
    super(ctx, deployment.env(env));
    this.#deployment = deployment;
    this.#config = deployment.config(this.env);
    this.#deletions = new ResponseDeletions(ctx.storage.kv);
    setLogLevel(this.#config.logLevel);
    // Loaded here, not at start-up (lib/platforms/mod.ts); the sentinel is built synchronously,
    // its claim taken before any await, so the table is ready before any request is let in.
    void ctx.blockConcurrencyWhile(async () => {
      this.#adapters = await chatAdapters();
    });
  }

  /** The session's sentinel, built on first use (its schema is the object's first write). */
  get #sentinel(): SessionSentinel {
    return this.#session(true)!;
  }

  /**
   * The sentinel; null for an erased session unless `reopen` (a message or a new job starts it
   * afresh). Refused while an erasure runs: the caller's 503 has its sender retry after it.
   */
  #session(reopen: boolean): SessionSentinel | null {
    if (this.#erasing) throw new Error("the session is being erased; retry");
    if (!this.#built && !sessionOpen(this.ctx.storage.kv, reopen)) return null;
    // A read of a session never written (a GET, /stop or a run id naming any key) builds nothing:
    // no schema, no storage. Thousands of such reads each made a database, and with a few large
    // sessions beside them workerd's SQLite ran out of memory for every object (SQLITE_NOMEM).
    if (!this.#built && !reopen && !holdsSession(this.ctx.storage)) return null;
    return this.#built ??= this.#buildSentinel();
  }

  /** Whether this object's session was erased (and not started again since). */
  #erased(): boolean {
    return !sessionOpen(this.ctx.storage.kv, false);
  }

  #buildSentinel(): SessionSentinel {
    return buildSessionSentinel(this.ctx, this.env, this.#deployment, this.#config, {
      noteMedia: (key) => this.#built?.noteMedia([key]),
      startDrain: () =>
        void this.#bound(this.#own(), () => this.#sentinel.drain().catch(_logDrainFailure)),
      adapters: this.#adapters,
    });
  }

  /** Stores a message durably before the caller acknowledges it. */
  submit(message: InboundMessage): Promise<SubmitReceipt> {
    return this.#bound(
      message.context,
      async () => await this.#overSessionCap(message.context) ?? this.#admit(message),
    );
  }

  /**
   * `submit`, and for a stored message its run's event stream (`runEvents`) in the same call: a
   * streamed API turn makes one RPC before its first chunk, not two, and is subscribed before its
   * run starts. Null events when the message was refused, or records no events.
   */
  submitAndSubscribe(
    message: InboundMessage,
  ): Promise<{ receipt: SubmitReceipt; events: ReadableStream<Uint8Array> | null }> {
    return this.#bound(message.context, async () => {
      const receipt = await this.#overSessionCap(message.context) ?? this.#admit(message);
      if (receipt.refused) return { receipt, events: null };
      const transport = ndjsonTransport<RunEvent>();
      const subscribed = this.#sentinel.subscribe(receipt.seq, transport);
      return { receipt, events: subscribed ? transport.readable : null };
    });
  }

  /**
   * Stores a message (or finds its earlier delivery) and waits for its turn's outcome; none when
   * refused. With `untilPaused`, returns `paused` (and no outcome) once the turn waits for approval.
   */
  submitAndWait(
    message: InboundMessage,
    untilPaused = false,
  ): Promise<{ receipt: SubmitReceipt; outcome: TurnOutcome | null; paused?: true }> {
    return this.#bound(message.context, async () => {
      const receipt = await this.#overSessionCap(message.context) ?? this.#admit(message);
      if (receipt.refused) return { receipt, outcome: null };
      const outcome = await this.#sentinel.outcome(receipt.seq, untilPaused);
      return outcome ? { receipt, outcome } : { receipt, outcome: null, paused: true as const };
    });
  }

  /** Stops the running turn and drops the queue (`stop`); `reset` then starts a fresh conversation. */
  control(command: "stop" | "reset", context: ContextFields) {
    return this.#bound(context, () => {
      const sentinel = this.#session(false);
      if (sentinel) return sentinel.control(command);
      if (this.#erased()) return null;
      // Never written: nothing runs, nothing waits, and a new conversation is what it has.
      const reply = command === "reset" ? newConversationText(false) : stopText(false, 0);
      return { reply, stopped: false, dropped: 0 };
    });
  }

  /** A run's state, or null. */
  runState(seq: number, context: ContextFields): RunState | null {
    return this.#bound(context, () => this.#session(false)?.runState(seq) ?? null);
  }

  /** A run's events as newline-delimited JSON: stored ones first, then live; null when there is no such run. */
  runEvents(seq: number, context: ContextFields): ReadableStream<Uint8Array> | null {
    return this.#bound(context, () => {
      const transport = ndjsonTransport<RunEvent>();
      return this.#session(false)?.subscribe(seq, transport) ? transport.readable : null;
    });
  }

  /**
   * Message `seq` as stored with its run's state (null when there is none, or it was deleted);
   * `withTurns` adds the conversation as its client saw it through that turn (null unless completed).
   */
  response(
    seq: number,
    context: ContextFields,
    withTurns = false,
  ): (MessageRecord & { turns?: ChatMessage[] | null }) | null {
    return this.#bound(context, () => {
      if (this.#deletions.deleted(seq)) return null;
      const sentinel = this.#session(false);
      const record = sentinel?.record(seq);
      if (!sentinel || !record) return null;
      const { seed: _seed, ...message } = record.message;
      return {
        ...record,
        message,
        ...(withTurns ? { turns: sentinel.turnsThrough(seq) } : {}),
      };
    });
  }

  /** Marks message `seq` deleted: `response` no longer finds it. False when there was none. */
  deleteResponse(seq: number, context: ContextFields): boolean {
    return this.#bound(
      context,
      () => this.#deletions.delete(seq, () => this.#session(false)?.record(seq) != null),
    );
  }

  /** Answers the approval question run `seq` waits on (see `SessionSentinel.answerApproval`). */
  answerApproval(
    seq: number,
    choice: ApprovalChoice,
    context: ContextFields,
  ): "answered" | "not_pending" | "not_found" {
    return this.#bound(
      context,
      () => this.#session(false)?.answerApproval(seq, choice, "api") ?? "not_found",
    );
  }

  /**
   * Answers a click on an approval question's button by the chat user `context` (see
   * `SessionSentinel.answerClick`); returns what the click did, typed: the adapter words it.
   */
  answerClick(data: string, context: ContextFields, admin: boolean): ApprovalAnswer {
    return this.#bound(context, () => {
      const sender = { userId: context.user_id ?? "", admin };
      return this.#sentinel.answerClick(data, sender);
    });
  }

  /** Steers `message` into run `seq` (see `SessionSentinel.steerRun`). */
  steerRun(
    seq: number,
    message: InboundMessage,
  ): SubmitReceipt | "ended" | "not_found" {
    return this.#bound(
      message.context,
      () => this.#session(false)?.steerRun(seq, message) ?? "not_found",
    );
  }

  /** Stops one run; false when it had already ended. */
  cancelRun(seq: number, context: ContextFields): boolean {
    return this.#bound(context, () => this.#session(false)?.cancelRun(seq) ?? false);
  }

  /** The session's tokens on each of `days` (UTC `YYYY-MM-DD`); zeros when it used none. */
  usage(days: string[], context: ContextFields): SessionDayUsage[] {
    return this.#bound(context, () => {
      const sentinel = this.#session(false);
      return sentinel ? sentinel.usage(days) : days.map(emptyDayUsage);
    });
  }

  /** The session's state and current conversation; null once erased (until a new message). */
  snapshot(context: ContextFields): SessionSnapshot | null {
    return this.#bound(context, () => {
      const sentinel = this.#session(false);
      if (sentinel) return sentinel.snapshot();
      return this.#erased() ? null : { running: false, queued: 0, messages: [], omitted: 0 };
    });
  }

  /**
   * Erases the session (see `eraseSession`): its running turn stopped, its storage and alarm
   * deleted. A second call meanwhile waits for the same erasure.
   */
  erase(context: ContextFields): Promise<Erasure> {
    return this.#erasing ??= this.#bound(context, async () => {
      try {
        return await eraseSession(this.ctx.storage, this.#built, Date.now());
      } finally {
        this.#built = null;
        this.#erasing = null;
      }
    });
  }

  /** Applies a jobs API request to this session's jobs (see `JobScheduler.apply`). */
  jobs(
    request: JobRequest,
    context: ContextFields & { session_key: string },
  ): Promise<JobAnswer> {
    return this.#bound(context, async (): Promise<JobAnswer> => {
      if (request.op === "create") {
        const refused = await this.#overSessionCap(context);
        if (refused) return { error: refused.notice!, status: 403 };
      }
      // Only a new job starts an erased session afresh; reading one finds none.
      const sentinel = this.#session(request.op === "create");
      if (!sentinel) {
        return request.op === "list" ? { jobs: [] } : { error: "no such job", status: 404 };
      }
      const key = context.session_key;
      if (request.op === "create") {
        const made = await sentinel.withNewJob(
          request.spec,
          (jobs, tx) => jobs.apply(tx, request, key),
        );
        return "refused" in made ? { error: made.refused, status: 429 } : made;
      }
      const answer = sentinel.withJobs((jobs, tx) => jobs.apply(tx, request, key));
      await sentinel.jobsReported(); // a deleted job's slot is free once its caller hears so
      return answer;
    });
  }

  /** The console inspector's read of this session (inbox, reply parts, run timelines); null when none. */
  inspect(context: ContextFields): SessionInspection | null {
    return this.#bound(context, () => inspectSession(this.ctx.storage));
  }

  /** Drains the inbox; also the watchdog that recovers a claim left by a dead executor. */
  override alarm(): Promise<void> {
    // An erased session's alarm (one set as it was erased) builds nothing.
    if (this.#erasing) return Promise.resolve();
    return this.#bound(this.#own(), () => this.#session(false)?.alarm() ?? Promise.resolve());
  }

  /**
   * The context of the entries no caller names (the alarm, a drain): the session key this object
   * is named by. Each turn and send binds its own message's context on top (turn_trace.ts).
   */
  #own(): ContextFields {
    const name = this.ctx.id.name;
    return name ? { session_key: name } : {};
  }

  /**
   * The sentinel's submit, behind the one check only this shell can make for a continuation by
   * reference (`continuesAfter`, a `previous_response_id`): that the response it names was stored
   * by the Responses API and not deleted. The sentinel checks the rest as it stores the message
   * (it still ends this conversation); either refusal is `history_mismatch`, and the Worker then
   * looks the response up to fork from it or to say why it cannot (404, 400). One RPC when the
   * conversation simply goes on.
   */
  #admit(message: InboundMessage): SubmitReceipt {
    const after = message.continuesAfter;
    if (after !== undefined && !this.#storedResponse(after)) {
      return { seq: 0, duplicate: false, refused: "history_mismatch" };
    }
    return this.#sentinel.submit(message);
  }

  /** Whether message `seq` is a response the Responses API stored and nobody deleted. */
  #storedResponse(seq: number): boolean {
    if (this.#deletions.deleted(seq)) return false;
    const meta = this.#session(false)?.record(seq)?.message.meta;
    return isResponseMeta(meta) && meta.store;
  }

  /** A refusal when this is a new session of an API tenant at MAX_SESSIONS_PER_TENANT, else null. */
  async #overSessionCap(context: ContextFields): Promise<SubmitReceipt | null> {
    const { ctx, env } = this;
    const limit = this.#config.maxSessionsPerTenant;
    const text = await admitTenantSession(env, ctx.storage, context.session_key ?? "", limit);
    return text === null
      ? null
      : { seq: 0, duplicate: false, refused: "session_limit", notice: text };
  }

  /** The one binding of every entry: RPC methods with their caller's context, the rest (#own). */
  #bound<T>(context: ContextFields, fn: () => T): T {
    return withSessionContext(context, this.#config.contextDefaults, fn);
  }
}

function _logDrainFailure(error: unknown): void {
  log.error("drain failed", { error: errorText(error) });
}

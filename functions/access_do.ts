// The access Durable Object: one per sender (pairing and quota record), per API tenant (quota), and the owner's pairing directory; Workers (cloudflare:workers).
import { chatAdapters } from "./_chat_adapters.ts";
import { DurableObject } from "cloudflare:workers";
import {
  type ApprovalResult,
  type PairedUser,
  PairingDirectory,
  type PairingRequest,
} from "../lib/access/pairing_directory.ts";
import {
  holdsNotices,
  type NoticeKind,
  NoticeOutbox,
  type NoticeUndo,
} from "../lib/access/notice_outbox.ts";
import {
  type AdmitRequest,
  type AdmitResult,
  admitToRecord,
  approveRecord,
  groupNoticeDue,
  isPaired,
  noticeFailed,
  revokeRecord,
  uncountTurn,
} from "../lib/access/sender_record.ts";
import {
  acquireStream,
  admitSession,
  forgetSession,
  releaseStream,
  type SessionAdmission,
} from "../lib/access/tenant_caps.ts";
import { admitJob, forgetJobs, type JobAdmission, reportJobs } from "../lib/access/tenant_jobs.ts";
import {
  type DayUsage,
  dayUsage,
  settleTokens,
  type TokenCounts,
} from "../lib/access/token_budget.ts";
import {
  answerMemoryCommand,
  forgetFacts,
  type MemoryCommand,
  readMemory,
  rememberFact,
  type RememberResult,
  type UserMemory,
} from "../lib/access/user_memory.ts";
import { forgetShownFact } from "../lib/access/forget_shown_fact.ts";
import { type BatonConfig, readConfig } from "../lib/deployment/mod.ts";
import { type ContextDefaults, errorText, log, withSessionContext } from "../lib/runtime/mod.ts";
import {
  type PlatformAdapter,
  type PlatformEnv,
  replyChannel,
  type ReplyTarget,
} from "../lib/chat/mod.ts";
import type { Env } from "./env.ts";

/**
 * Named `sender:<platform>:<user>` (one sender's record, consulted once per message from a sender
 * the settings do not list, and their memory across chats), `apiuser:<tenant>:<user>` (an API
 * user's memory), `tenant:<name>` (an API tenant's turn quota, its sessions — asked by
 * a session's first message only —, its jobs per session — asked when a job is created or ends —
 * and its open streams' leases), `notice:<session key>`
 * (a per-chat notice throttle) or `directory` (the owner's list of codes and paired users, never
 * on an ordinary message's path). Every decision is synchronous: the object runs one at a time, so
 * a record's decisions are consistent under any concurrency. A sender's record and a chat's
 * throttle also keep the notices the gate answers with, and send them (`queueNotice`, the alarm).
 */
export class AccessDO extends DurableObject<Env> {
  readonly #config: BatonConfig;
  readonly #defaults: ContextDefaults;
  #directory: PairingDirectory | null = null;
  #noticeOutbox: NoticeOutbox | null = null;
  /** Every adapter a notice may go out through (`chatAdapters()`). */
  #adapters: readonly PlatformAdapter[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#defaults = this.#config.contextDefaults;
    // The notices' adapters, loaded here rather than at start-up (lib/platforms/mod.ts):
    // `queueNotice` splits a notice synchronously, so the table is ready before any request.
    void ctx.blockConcurrencyWhile(async () => {
      this.#adapters = await chatAdapters();
    });
  }

  /** Decides one message against this sender's (or tenant's) record. */
  admit(request: AdmitRequest): AdmitResult {
    return this.#bound(() => admitToRecord(this.ctx.storage.kv, request));
  }

  /**
   * Settles the token reservation `key` (taken by `admit` with `tokens`) with what its turn used
   * (lib/access/token_budget.ts); a second settlement counts nothing. `reserved: false`: the
   * turn took no reservation (no cap set), so none is read.
   */
  settleTokens(key: string, used: TokenCounts, reserved?: boolean): boolean {
    return this.#bound(() => settleTokens(this.ctx.storage.kv, key, used, Date.now(), reserved));
  }

  /** This sender's (or tenant's) tokens on UTC day `day` (`YYYY-MM-DD`), reservations included. */
  tokenUsage(day: string): DayUsage {
    return this.#bound(() => dayUsage(this.ctx.storage.kv, day));
  }

  /** A group chat's throttle: whether an access notice may go to the chat now (see `groupNoticeDue`). */
  groupNoticeDue(): boolean {
    return this.#bound(() => groupNoticeDue(this.ctx.storage.kv, Date.now()));
  }

  /** Tenant: takes back the turn `admit` counted for `deliveryKey` (see `uncountTurn`). */
  uncountTurn(deliveryKey: string): boolean {
    return this.#bound(() => uncountTurn(this.ctx.storage.kv, deliveryKey));
  }

  /** A notice `admit` (or `groupNoticeDue`) counted as sent was not sent: let the next message try. */
  noticeFailed(kind: NoticeKind): void {
    this.#bound(() => noticeFailed(this.ctx.storage.kv, kind));
  }

  /**
   * A sender's record, a chat's notice throttle: stores a notice for `target` and sends it from
   * here, once (see `NoticeOutbox`); the caller acknowledges its delivery when this returns. `undo`:
   * the throttles the notice counted, taken back if it is given up.
   */
  queueNotice(target: ReplyTarget, text: string, undo: NoticeUndo[]): void {
    this.#bound(() => this.#notices.queue(target, text, undo));
  }

  /** The notices' watchdog: what a killed runtime left unsent goes out now (no other use of the alarm). */
  override alarm(): Promise<void> {
    return this.#bound(() => this.#notices.alarm());
  }

  /** Tenant: counts session `key` unless that passes `limit` (see `admitSession`). */
  admitSession(key: string, limit: number, existing: boolean): SessionAdmission {
    return this.#bound(() => admitSession(this.ctx.storage.kv, key, limit, existing));
  }

  /** Tenant: uncounts session `key` (erased), its jobs included; true when it was counted. */
  forgetSession(key: string): boolean {
    return this.#bound(() => {
      forgetJobs(this.ctx.storage.kv, key);
      return forgetSession(this.ctx.storage.kv, key);
    });
  }

  /** Tenant: one more job in session `key`, which holds `live`, unless past `limit` (see `admitJob`). */
  admitJob(key: string, live: number, limit: number): JobAdmission {
    return this.#bound(() => admitJob(this.ctx.storage.kv, key, live, limit));
  }

  /** Tenant: session `key` holds `live` jobs not done. */
  reportJobs(key: string, live: number): void {
    this.#bound(() => reportJobs(this.ctx.storage.kv, key, live));
  }

  /** Tenant: takes or renews stream lease `id`; null when held, else a retry hint in ms. */
  acquireStream(id: string, limit: number): number | null {
    return this.#bound(() => acquireStream(this.ctx.storage.kv, id, limit, Date.now()));
  }

  /** Tenant: frees stream lease `id`. */
  releaseStream(id: string): void {
    this.#bound(() => releaseStream(this.ctx.storage.kv, id));
  }

  /** A sender's (or `apiuser:` object's) memory across chats (lib/access/user_memory.ts). */
  memory(): UserMemory {
    return this.#bound(() => readMemory(this.ctx.storage.kv));
  }

  /** Stores one fact in this user's memory, under `MEMORY_MAX_CHARS` and `MEMORY_FACT_MAX_CHARS`. */
  remember(fact: string): RememberResult {
    const { maxChars, factMaxChars } = this.#config.memory;
    return this.#bound(() =>
      rememberFact(this.ctx.storage.kv, fact, { maxChars, factMaxChars }, Date.now())
    );
  }

  /** `/memory`, `/forget`, `/forget N`: applied once per `deliveryKey`, answered with the text. */
  memoryCommand(command: MemoryCommand, deliveryKey: string): string {
    return this.#bound(() => answerMemoryCommand(this.ctx.storage.kv, command, deliveryKey));
  }

  /**
   * Forgets every fact (DELETE /v1/memory): the memory's version goes on rising, so a list read
   * before never names a later fact. How many were forgotten.
   */
  forgetAllFacts(): number {
    return this.#bound(() => forgetFacts(this.ctx.storage.kv, "all"));
  }

  /** The console's Forget: fact `which` of memory `version` (lib/access/forget_shown_fact.ts). */
  forgetShownFact(which: number, version: number): { forgotten: number; conflict: boolean } {
    return this.#bound(() => forgetShownFact(this.ctx.storage.kv, which, version));
  }

  /** Pairs this sender (idempotent). */
  approve(by: string): void {
    this.#bound(() => approveRecord(this.ctx.storage.kv, by, Date.now()));
  }

  /** Whether this sender is paired now; changes nothing. */
  paired(): boolean {
    return this.#bound(() => isPaired(this.ctx.storage.kv));
  }

  /** Unpairs this sender; true when they had been paired. */
  revoke(): boolean {
    return this.#bound(() => revokeRecord(this.ctx.storage.kv));
  }

  /**
   * Directory: records a pending code; false when the code names someone else, `"full"` when
   * `limit` others of the platform wait already.
   */
  registerPairing(
    pairing: { code: string; platform: string; user: string; name: string },
    firstAt: number,
    expiresAt: number,
    limit?: number,
  ): boolean | "full" {
    return this.#bound(() => this.#dir.register(pairing, firstAt, expiresAt, Date.now(), limit));
  }

  /** Directory: approves a code once. */
  approvePairing(code: string, by: string): ApprovalResult {
    return this.#bound(() => this.#dir.approve(code, by, Date.now()));
  }

  /** Directory: forgets a paired user; true when listed. */
  forgetPaired(platform: string, user: string): boolean {
    return this.#bound(() => this.#dir.forget(platform, user));
  }

  /** Directory: forgets a sender's pairing and codes, for their erasure (see `PairingDirectory.erase`). */
  eraseSender(platform: string, user: string): { paired: boolean; codes: number } {
    return this.#bound(() => this.#dir.erase(platform, user));
  }

  /**
   * Erases this object (a sender's record, a chat's notice throttle): everything it keeps, for a
   * data-protection request. True when it kept anything.
   */
  async erase(): Promise<boolean> {
    // A sender's record and a notice throttle keep keys and notices (the directory is never erased).
    const held = [...this.ctx.storage.kv.list({ limit: 1 })].length > 0 ||
      holdsNotices(this.ctx.storage.sql);
    this.#noticeOutbox?.close();
    this.#noticeOutbox = null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return held;
  }

  /** Directory: codes waiting for approval. */
  pendingPairings(): PairingRequest[] {
    return this.#bound(() => this.#dir.pending(Date.now()));
  }

  /** Directory: paired users. */
  pairedUsers(): PairedUser[] {
    return this.#bound(() => this.#dir.paired());
  }

  get #notices(): NoticeOutbox {
    return this.#noticeOutbox ??= new NoticeOutbox(this.ctx.storage, {
      channel: replyChannel(this.#adapters, this.env as unknown as PlatformEnv),
      leaseMs: this.#config.turnLeaseMs,
      givenUp: (undo) => this.#takeBack(undo),
      now: Date.now,
    });
  }

  // A notice given up: its throttles let the sender's next message try again.
  async #takeBack(undo: NoticeUndo[]): Promise<void> {
    const namespace = this.env.ACCESS as DurableObjectNamespace<AccessDO>;
    for (const { kind, object } of undo) {
      if (!object) {
        noticeFailed(this.ctx.storage.kv, kind);
        continue;
      }
      await namespace.get(namespace.idFromName(object)).noticeFailed(kind).catch((error) => {
        log.warn("access: a notice throttle was not taken back", { error: errorText(error) });
      });
    }
  }

  get #dir(): PairingDirectory {
    return this.#directory ??= new PairingDirectory(this.ctx.storage.sql);
  }

  // Every entry is bound, with an empty context: nothing here runs a turn.
  #bound<T>(fn: () => T): T {
    return withSessionContext({}, this.#defaults, fn);
  }
}

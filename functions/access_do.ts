// The access Durable Object: one per sender (pairing and quota record), per API tenant (quota), and the owner's pairing directory; Workers (cloudflare:workers).
import { DurableObject } from "cloudflare:workers";
import {
  type ApprovalResult,
  type PairedUser,
  PairingDirectory,
  type PairingRequest,
} from "../lib/access/pairing_directory.ts";
import {
  type AdmitRequest,
  type AdmitResult,
  admitToRecord,
  approveRecord,
  isPaired,
  noticeFailed,
  revokeRecord,
} from "../lib/access/sender_record.ts";
import { readConfig } from "../lib/config.ts";
import { type ContextDefaults, withSessionContext } from "../lib/session_context.ts";
import type { Env } from "./env.ts";

/**
 * Named `sender:<platform>:<user>` (one sender's record, consulted once per message from a sender
 * the settings do not list), `tenant:<name>` (an API tenant's turn quota), `notice:<session key>`
 * (a per-chat notice throttle) or `directory` (the owner's list of codes and paired users, never
 * on an ordinary message's path). Every method is synchronous: the object runs one at a time, so
 * a record's decisions are consistent under any concurrency.
 */
export class AccessDO extends DurableObject<Env> {
  readonly #defaults: ContextDefaults;
  #directory: PairingDirectory | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#defaults = readConfig(env).contextDefaults;
  }

  /** Decides one message against this sender's (or tenant's) record. */
  admit(request: AdmitRequest): AdmitResult {
    return this.#bound(() => admitToRecord(this.ctx.storage.kv, request));
  }

  /** A notice `admit` counted as sent was not sent: let the next message try. */
  noticeFailed(kind: "refusal" | "quota"): void {
    this.#bound(() => noticeFailed(this.ctx.storage.kv, kind));
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

  /** Directory: records a pending code; false when the code names someone else. */
  registerPairing(
    pairing: { code: string; platform: string; user: string; name: string },
    firstAt: number,
    expiresAt: number,
  ): boolean {
    return this.#bound(() => this.#dir.register(pairing, firstAt, expiresAt, Date.now()));
  }

  /** Directory: approves a code once. */
  approvePairing(code: string, by: string): ApprovalResult {
    return this.#bound(() => this.#dir.approve(code, by, Date.now()));
  }

  /** Directory: forgets a paired user; true when listed. */
  forgetPaired(platform: string, user: string): boolean {
    return this.#bound(() => this.#dir.forget(platform, user));
  }

  /** Directory: codes waiting for approval. */
  pendingPairings(): PairingRequest[] {
    return this.#bound(() => this.#dir.pending(Date.now()));
  }

  /** Directory: paired users. */
  pairedUsers(): PairedUser[] {
    return this.#bound(() => this.#dir.paired());
  }

  get #dir(): PairingDirectory {
    return this.#directory ??= new PairingDirectory(this.ctx.storage.sql);
  }

  // Every entry is bound, with an empty context: nothing here runs a turn.
  #bound<T>(fn: () => T): T {
    return withSessionContext({}, this.#defaults, fn);
  }
}

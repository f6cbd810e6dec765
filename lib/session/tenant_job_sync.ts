// A session's side of its API tenant's job cap (MAX_JOBS_PER_TENANT): a create asks the tenant first, and the session's live job count is told to it when it changes; runtime-neutral.
import { errorText, log } from "../runtime/mod.ts";

/**
 * The host's line to the session's API tenant (none: not an API tenant's session, or no cap;
 * then nothing here does any I/O).
 */
export interface TenantJobCount {
  /**
   * Asked before a job is stored, with the session's `live` jobs not done: null when the tenant
   * admits one more (it counts this session at `live + 1` now), else the refusal's text.
   */
  admit(live: number): Promise<string | null>;
  /**
   * The session holds `live` jobs not done. The host tells the tenant only when that differs
   * from what the tenant last acknowledged, so calling it when nothing changed costs no I/O.
   */
  report(live: number): Promise<void>;
}

/**
 * Keeps the tenant's count of this session's jobs right. Every admission and report of the
 * session runs one after another (a create asks with the count it then stores against), so two
 * creates in one session never both take the last slot; the tenant's object orders those of
 * different sessions. What it reports is the session's count, not a change, so a lost report is
 * made good by the next one: after a failure, and once per instance (a session with jobs from
 * before the cap was on), at the end of the next drain (`settle`).
 */
export class TenantJobSync {
  readonly #count: TenantJobCount | undefined;
  readonly #live: () => number;
  #tail: Promise<unknown> = Promise.resolve();
  /** The tenant may not know this session's count: check at the next `settle`. */
  #unsure = true;

  constructor(count: TenantJobCount | undefined, live: () => number) {
    this.#count = count;
    this.#live = live;
  }

  /**
   * Runs `create` (which stores the job, or says why not) once the tenant admits one more job;
   * `{ refused }` with the tenant's text instead, and `create` never runs. A job `create` would
   * refuse anyway (`wouldStore` false: bad input, the session's own cap) asks the tenant nothing.
   * After it the count is reported again: a reservation whose job was not stored is given back.
   */
  create<T>(wouldStore: () => boolean, create: () => T): Promise<T | { refused: string }> {
    const count = this.#count;
    if (!count) return Promise.resolve(create());
    return this.#serial(async () => {
      if (!wouldStore()) return create();
      let refusal: string | null;
      try {
        refusal = await count.admit(this.#live());
      } catch (error) {
        this.#unsure = true; // the tenant may have counted the reservation
        throw error;
      }
      if (refusal !== null) return { refused: refusal };
      try {
        return create();
      } finally {
        await this.#report(count);
      }
    });
  }

  /** Tells the tenant the session's count (after a job ended or was removed); never throws. */
  sync(): Promise<void> {
    const count = this.#count;
    if (!count) return Promise.resolve();
    return this.#serial(() => this.#report(count));
  }

  /** `sync` when a report failed or this instance has not checked yet (a drain's end). */
  settle(): Promise<void> {
    return this.#unsure ? this.sync() : Promise.resolve();
  }

  /** Settles once every admission and report started so far has ended (an erasure waits). */
  idle(): Promise<void> {
    return this.#tail.then(() => {}, () => {});
  }

  async #report(count: TenantJobCount): Promise<void> {
    try {
      await count.report(this.#live());
      this.#unsure = false;
    } catch (error) {
      this.#unsure = true;
      log.warn("the tenant's job count was not updated", { error: errorText(error) });
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => {});
    return run;
  }
}

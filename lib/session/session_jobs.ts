// A session's jobs as its sentinel works them: API changes in one transaction, due occurrences fired as messages, the tenant's count kept right; runtime-neutral.
import { dueJobVerdicts, type JobCheck } from "./due_job_verdicts.ts";
import type { JobScheduler, JobSpec } from "./job_scheduler.ts";
import type { NotPromise, Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TenantJobSync } from "./tenant_job_sync.ts";

/** A change to the session's jobs, run in one transaction (so it returns no promise). */
export type JobChange<T> = (jobs: JobScheduler, tx: Tx) => NotPromise<T>;

/** What `SessionJobs` is handed by its sentinel: the session's parts and its own steps. */
export interface SessionJobsParts {
  stores: SessionStores;
  jobs: JobScheduler;
  /** Its API tenant's count of the session's jobs (`options.tenantJobs`). */
  tenantJobs: TenantJobSync;
  /** The host's check of a due occurrence (`options.jobAllowed`); none: every due job runs. */
  jobAllowed?: JobCheck;
  /** Makes sure a drain will run (a job run now is a queued message). */
  wake: () => void;
  /** Sends the notices written so far (a skipped occurrence's). */
  flushNotices: () => void;
}

/**
 * The session's jobs: what the jobs API changes (`with`, `withNew`), and what the drain fires
 * (`fire`) and arms the alarm for (`nextDue`). The tenant is told of each change to the count.
 */
export class SessionJobs {
  readonly #parts: SessionJobsParts;

  constructor(parts: SessionJobsParts) {
    this.#parts = parts;
  }

  /**
   * Runs `change` on the session's jobs in one transaction, then starts a drain: a job run now
   * is a queued message, and the drain's end sets the alarm for the next occurrence.
   */
  with<T>(change: JobChange<T>): T {
    const { stores, jobs, tenantJobs, wake } = this.#parts;
    const result = stores.db.transaction((tx) => change(jobs, tx));
    void tenantJobs.sync(); // a removed job, or a resumed one-off now done: no I/O otherwise
    wake();
    return result;
  }

  /**
   * `with` for a job `spec` (the jobs API's create): asked of the session's API tenant first
   * (MAX_JOBS_PER_TENANT), `{ refused }` with its text instead.
   */
  withNew<T>(spec: JobSpec, create: JobChange<T>): Promise<T | { refused: string }> {
    const wouldStore = () => this.#parts.jobs.refusal(spec) === null;
    return this.#parts.tenantJobs.create(wouldStore, () => this.with(create));
  }

  /** Settles once the tenant has been told of every change to the session's jobs made so far. */
  reported(): Promise<void> {
    return this.#parts.tenantJobs.idle();
  }

  /** Tells the tenant the session's count again if it may not know it (once a drain ends). */
  settle(): Promise<void> {
    return this.#parts.tenantJobs.settle();
  }

  /** When the next job occurrence is due (the alarm's time for it), or null when none is. */
  nextDue(): number | null {
    return this.#parts.jobs.nextDue();
  }

  /**
   * Due occurrences become messages; a job whose creator lost access is removed instead, and an
   * occurrence over its creator's quota is recorded failed (skipped) instead of run.
   */
  async fire(): Promise<void> {
    const { stores, jobs, tenantJobs, jobAllowed: check } = this.#parts;
    // One indexed read per turn when nothing is due (the common case): nothing else runs.
    const due = jobs.due();
    if (!due.length) return;
    if (!check) {
      stores.db.transaction((tx) => jobs.fireDue(tx));
    } else {
      const { remove, decided } = await dueJobVerdicts(due, check);
      for (const id of remove) stores.db.transaction((tx) => jobs.remove(tx, id));
      stores.db.transaction((tx) => jobs.fireDue(tx, decided));
      if ([...decided.values()].some((d) => d.skip?.notice)) this.#parts.flushNotices();
    }
    await tenantJobs.sync(); // a one-off fired is done, a removed job gone
  }
}

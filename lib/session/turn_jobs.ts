// The session's jobs as the running turn may use them (the scheduling tools), bound per turn with AsyncLocalStorage; any runtime with node:async_hooks.
import { AsyncLocalStorage } from "node:async_hooks";
import type { JobSpec, JobView } from "./job_scheduler.ts";

/** What a turn may do with its session's jobs: a job it creates replies where the turn does. */
export interface TurnJobs {
  /** Refused (bad input, a session's or tenant's job cap, the turn ended): why, and nothing stored. */
  create(spec: JobSpec): Promise<{ job: JobView } | { error: string }>;
  list(): JobView[];
  /** False when there is no such job. */
  cancel(id: number): boolean;
}

const _storage = new AsyncLocalStorage<TurnJobs>();

/** Runs `fn` (a turn) with `jobs` as the jobs its tools see. */
export function withTurnJobs<T>(jobs: TurnJobs, fn: () => T): T {
  return _storage.run(jobs, fn);
}

/** The running turn's jobs, or null outside a session's turn (nothing can be scheduled there). */
export function currentTurnJobs(): TurnJobs | null {
  return _storage.getStore() ?? null;
}

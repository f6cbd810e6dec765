// The session's jobs as the running turn may use them (the scheduling tools), read from the turn's one frame; any runtime with node:async_hooks.
import { frameJobs } from "../runtime/mod.ts";
import type { JobSpec, JobView } from "./job_scheduler.ts";

/** What a turn may do with its session's jobs: a job it creates replies where the turn does. */
export interface TurnJobs {
  /** Refused (bad input, a session's or tenant's job cap, the turn ended): why, and nothing stored. */
  create(spec: JobSpec): Promise<{ job: JobView } | { error: string }>;
  list(): JobView[];
  /** False when there is no such job. */
  cancel(id: number): boolean;
}

/**
 * The running turn's jobs, or null outside a session's turn (nothing can be scheduled there).
 * They are bound with the turn's frame (turn_trace.ts `traced`), whose only writer passes a
 * `TurnJobs`: the frame holds them untyped so that lib/runtime/session_context.ts imports nothing of here.
 */
export function currentTurnJobs(): TurnJobs | null {
  return frameJobs() as TurnJobs | null;
}

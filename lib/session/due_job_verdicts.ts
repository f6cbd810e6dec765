// What becomes of each due job before it fires — run, skip (its creator is over their quota) or remove (its creator lost access) — as the host's check answers; runtime-neutral.
import { log } from "../runtime/mod.ts";
import type { Job } from "./jobs.ts";
import type { JobSkip } from "./job_scheduler.ts";
import type { InboundMessage } from "./types.ts";

/** The host's check of a due occurrence (see `SentinelOptions.jobAllowed`). */
export type JobCheck = (
  context: InboundMessage["context"],
  occurrence: string,
) => Promise<boolean | JobSkip>;

/** The verdicts on a round of due jobs: the jobs to remove, and the occurrences to fire or skip. */
export interface DueJobVerdicts {
  remove: number[];
  /** By job id: the occurrence checked, and its skip (null: it runs). Only these fire this round. */
  decided: Map<number, { at: number; skip: JobSkip | null }>;
}

/**
 * Asks `check` about each of `due` (keyed by job and occurrence, so a retried alarm asks the same
 * question). A check that fails lets the job run, and says so in the log.
 */
export async function dueJobVerdicts(
  due: readonly Job[],
  check: JobCheck,
): Promise<DueJobVerdicts> {
  const verdicts: DueJobVerdicts = { remove: [], decided: new Map() };
  for (const job of due) {
    const at = job.nextRunAt!;
    const verdict = await check(job.context, `job:${job.id}:${at}`).catch((error) => {
      log.warn("job access not checked; it runs", { job: job.id, error: String(error) });
      return true as const;
    });
    if (verdict === false) {
      verdicts.remove.push(job.id);
      log.info("job removed: its creator may no longer use the bot", { job: job.id });
      continue;
    }
    const skip = verdict === true ? null : verdict;
    if (skip) {
      log.info("job occurrence skipped: over its creator's quota", {
        job: job.id,
        occurrence: new Date(at).toISOString(),
        reason: skip.error.message,
      });
    }
    verdicts.decided.set(job.id, { at, skip });
  }
  return verdicts;
}

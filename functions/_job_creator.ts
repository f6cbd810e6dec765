// Before a scheduled job's occurrence runs: its creator's access and turn quota, asked of their own access record (the one their chat calls or messages count in); Workers.
import {
  jobCreatorCheck,
  type JobCreatorContext,
  type JobLimits,
  jobOccurrenceVerdict,
} from "../lib/access/job_creator.ts";
import type { JobSkip } from "../lib/session/mod.ts";
import { accessStub, senderStub } from "./access_client.ts";
import type { Env } from "./env.ts";

/**
 * Asked by the session object each time a job is due (never on a message's path): true runs the
 * occurrence, false removes the job (its chat creator may no longer use the bot), a skip records
 * it failed instead (its creator, chat user or API tenant, is over their turn quota; the turn is
 * counted like any other). No quota and no pairing to check: no I/O.
 */
export async function admitJobOccurrence(
  env: Env,
  limits: JobLimits,
  context: JobCreatorContext,
  occurrence: string,
): Promise<boolean | JobSkip> {
  const check = jobCreatorCheck(limits, context, occurrence);
  if (!check) return true;
  const record = "tenant" in check.record
    ? accessStub(env, `tenant:${check.record.tenant}`)
    : senderStub(env, check.record.sender);
  return jobOccurrenceVerdict(check, await record.admit({ ...check.request, now: Date.now() }));
}

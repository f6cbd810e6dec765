// The session's jobs as one claimed turn's scheduling tools see them: bound to its chat, announced in it, refused once the turn has ended; runtime-neutral.
import { jobCreatedText } from "../chat/mod.ts";
import type { Claim } from "./claim.ts";
import { type JobScheduler, originOf } from "./job_scheduler.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TenantJobSync } from "./tenant_job_sync.ts";
import type { TurnJobs } from "./turn_jobs.ts";
import type { InboundMessage } from "./types.ts";

/**
 * The session's jobs as `claim`'s turn sees them: a job it creates replies where the turn
 * does and binds its chat and user, never the message's own id. A chat is told of each job
 * created, how to cancel it included, by a notice stored with the job (never one without the
 * other) and sent at once, like an approval question: the model's reply cannot leave it out.
 * Once the turn no longer holds the session, nothing it asks changes a job.
 */
export function claimedTurnJobs(
  stores: SessionStores,
  options: {
    scheduler: JobScheduler;
    sender: OutboxSender | null;
    tenantJobs: TenantJobSync;
    now: () => number;
  },
  claim: Claim,
  message: InboundMessage,
): TurnJobs {
  const { db, claims, outbox } = stores;
  const { scheduler, sender, tenantJobs } = options;
  const origin = originOf(message);
  const ended = { error: "the turn has ended" };
  const target = sender ? message.reply : undefined;
  return {
    // An API tenant's session asks its tenant first (MAX_JOBS_PER_TENANT): refused, the model
    // reads why, and nothing is stored or announced.
    create: async (spec) => {
      const created = await tenantJobs.create(
        () => claims.holds(claim) && scheduler.refusal(spec) === null,
        () =>
          db.transaction((tx) => {
            if (!claims.holds(claim)) return ended;
            const result = scheduler.create(tx, spec, origin);
            if (target && "job" in result) {
              const text = jobCreatedText(result.job);
              outbox.add(tx, "notice", claim.seq, target, [text], options.now());
            }
            return result;
          }),
      );
      const made = "refused" in created ? { error: created.refused } : created;
      if (target && "job" in made) sender!.flushNotices().catch(() => {});
      return made;
    },
    list: () => scheduler.list(),
    cancel: (id) => {
      const removed = db.transaction((tx) => claims.holds(claim) && scheduler.remove(tx, id));
      if (removed) void tenantJobs.sync();
      return removed;
    },
  };
}

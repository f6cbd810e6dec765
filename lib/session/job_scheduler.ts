// A session's jobs over time: created from a turn or the API, fired as inbox messages exactly once per occurrence, paused, run now, removed; runtime-neutral.
import type { ReplyTarget } from "../chat/mod.ts";
import { nextOccurrence, resolveSchedule, type ScheduleInput, scheduleView } from "./schedule.ts";
import type { Job } from "./jobs.ts";
import type { Tx } from "./session_db.ts";
import { runStateOf, type SessionStores } from "./session_stores.ts";
import type { InboundMessage, RunState } from "./types.ts";

/** What a job asks and when. */
export interface JobSpec {
  prompt: string;
  schedule: ScheduleInput;
}

/** Where a job's replies go and whose context its turns bind: the turn or caller that created it. */
export interface JobOrigin {
  target: ReplyTarget | null;
  context: Job["context"];
}

/**
 * The origin of a job created from `message`: it replies where the message came from and binds
 * its chat and user, never the message's own id (nor a job's).
 */
export function originOf(message: InboundMessage): JobOrigin {
  const { message_id: _id, job_id: _job, ...context } = message.context;
  return { target: message.reply ?? null, context };
}

/** A job as callers see it (the API adds its id and session). */
export interface JobView {
  id: number;
  prompt: string;
  schedule: ScheduleInput;
  status: Job["status"];
  next_run_at: string | null;
  reason?: string;
  last_runs: { at: string; seq: number; status: RunState["status"] | "unknown" }[];
}

/** One request of the jobs API to a session (its object applies it in one transaction). */
export type JobRequest =
  | { op: "create"; spec: JobSpec; origin: "api" | "chat" }
  | { op: "list" }
  | { op: "get" | "delete" | "run" | "pause" | "resume"; id: number };

/**
 * A jobs API request's answer: the job, the list, or why not (a 4xx for the caller; 403 from the
 * host: a new session its API tenant may not have; 429: a job past MAX_JOBS_PER_TENANT).
 */
export type JobAnswer =
  | { job: JobView }
  | { jobs: JobView[] }
  | { deleted: true }
  | { error: string; status: 400 | 403 | 404 | 409 | 429 };

/**
 * A due occurrence that is not to run (its creator is over their turn quota): it is recorded as
 * a run that failed with `error`, no turn starts, and `notice` (null: none now) goes to the job's
 * chat.
 */
export interface JobSkip {
  error: { message: string; type: string };
  notice: string | null;
}

/** Tunables of the scheduler. */
export interface JobSchedulerOptions {
  /** Jobs not done yet, at most, per session. */
  maxJobs: number;
  /** An occurrence fired later than this after its time says it is late. */
  lateAfterMs?: number;
  now: () => number;
  /**
   * The access record a job's turn settles its tokens with, under `key` (its creator's: given by
   * the deployment, lib/access/job_creator.ts `jobSpend`); absent: not settled anywhere.
   */
  jobSpend?: (context: Job["context"], key: string) => { record: string; key: string } | null;
}

const _PROMPT_MAX = 4_000;

/**
 * The session's jobs. A due occurrence becomes an inbox message in the same transaction that
 * moves the job to its next occurrence, keyed (job, occurrence) both in the inbox's dedup and in
 * `job_run`: repeated alarms or a restart mid-fire never run one twice. Occurrences missed while
 * nothing ran collapse into one late run; the schedule continues from now.
 */
export class JobScheduler {
  readonly #stores: SessionStores;
  readonly #options: JobSchedulerOptions;

  constructor(stores: SessionStores, options: JobSchedulerOptions) {
    this.#stores = stores;
    this.#options = options;
  }

  /** Why `create` would refuse `spec` now (bad input, the session's own cap), or null; stores nothing. */
  refusal(spec: JobSpec): string | null {
    const prompt = spec.prompt.trim();
    if (!prompt) return "the prompt is empty";
    if (prompt.length > _PROMPT_MAX) return `the prompt is over ${_PROMPT_MAX} characters`;
    if (this.#stores.jobs.liveCount() >= this.#options.maxJobs) {
      return `this session has ${this.#options.maxJobs} jobs already (the limit)`;
    }
    const resolved = resolveSchedule(spec.schedule, this.#options.now());
    return "error" in resolved ? resolved.error : null;
  }

  /** Creates a job from `spec` for `origin`; or the reason it is refused (nothing stored). */
  create(tx: Tx, spec: JobSpec, origin: JobOrigin): { job: JobView } | { error: string } {
    const refused = this.refusal(spec);
    if (refused !== null) return { error: refused };
    const now = this.#options.now();
    const resolved = resolveSchedule(spec.schedule, now);
    if ("error" in resolved) return resolved;
    const id = this.#stores.jobs.add(tx, {
      prompt: spec.prompt.trim(),
      schedule: resolved.schedule,
      nextRunAt: resolved.first,
      createdAt: now,
      target: origin.target,
      context: origin.context,
    });
    return { job: this.view(id)! };
  }

  /**
   * Applies a jobs API request. A job created for a chat session (`origin: "chat"`) replies in
   * the chat the session's newest chat message came from; an API session's jobs are runs.
   */
  apply(tx: Tx, request: JobRequest, sessionKey: string): JobAnswer {
    const missing = { error: "no such job", status: 404 } as const;
    switch (request.op) {
      case "create": {
        let origin: JobOrigin = { target: null, context: { session_key: sessionKey } };
        if (request.origin === "chat") {
          const last = this.#stores.inbox.lastFromChat();
          if (!last?.reply) {
            return { error: "the session has no chat to reply in yet", status: 409 };
          }
          origin = originOf(last);
        }
        const made = this.create(tx, request.spec, origin);
        return "error" in made ? { error: made.error, status: 400 } : made;
      }
      case "list":
        return { jobs: this.list() };
      case "get": {
        const job = this.view(request.id);
        return job ? { job } : missing;
      }
      case "delete":
        return this.remove(tx, request.id) ? { deleted: true } : missing;
      case "run":
        return this.runNow(tx, request.id) ? { job: this.view(request.id)! } : missing;
      case "pause":
      case "resume": {
        if (!this.#stores.jobs.get(request.id)) return missing;
        if (!this.setPaused(tx, request.id, request.op === "pause")) {
          return { error: "the job is done", status: 409 };
        }
        return { job: this.view(request.id)! };
      }
    }
  }

  /** The active jobs due now, earliest first. */
  due(): Job[] {
    return this.#stores.jobs.due(this.#options.now());
  }

  /**
   * Turns every due occurrence into a message; returns how many it fired. With `decided` (what
   * the host said of each occurrence it was asked about, by job id), only those occurrences
   * fire, and one with a skip is recorded failed instead of run: a job that fell due while the
   * host was asked waits for the next round, never fires unasked.
   */
  fireDue(tx: Tx, decided?: ReadonlyMap<number, { at: number; skip: JobSkip | null }>): number {
    const now = this.#options.now();
    const due = this.#stores.jobs.due(now).filter((job) =>
      !decided || decided.get(job.id)?.at === job.nextRunAt
    );
    for (const job of due) {
      const occurrence = job.nextRunAt!;
      this.#fire(tx, job, occurrence, now);
      const skip = decided?.get(job.id)?.skip;
      if (skip) this.#skipped(tx, job.id, occurrence, skip, now);
    }
    return due.length;
  }

  /**
   * Settles the message occurrence `occurrence` of job `id` just became as failed with the
   * skip's error (it never runs), queues the skip's notice to the job's chat, and keeps the
   * error as the job's reason. A message that was there already (a repeated alarm) is left be.
   */
  #skipped(tx: Tx, id: number, occurrence: number, skip: JobSkip, now: number): void {
    const { inbox, jobs, outbox } = this.#stores;
    const run = jobs.runs(id, 1)[0];
    if (!run || run.occurrence !== occurrence || inbox.get(run.seq)?.status !== "queued") return;
    this.#stores.settle(tx, run.seq, { status: "failed", error: skip.error });
    const job = jobs.get(id)!;
    if (job.target && skip.notice) {
      outbox.add(tx, "notice", run.seq, job.target, [skip.notice], now);
    }
    jobs.update(tx, id, {
      status: job.status,
      nextRunAt: job.nextRunAt,
      reason: skip.error.message,
    });
  }

  /** Fires job `id` now, off its schedule (`POST /v1/jobs/{id}/run`); false when there is none. */
  runNow(tx: Tx, id: number): boolean {
    const job = this.#stores.jobs.get(id);
    if (!job) return false;
    this.#submit(tx, job, this.#options.now(), null, "manual");
    return true;
  }

  /**
   * Pauses or resumes job `id`; false when there is none or it is done. A one-off job resumed
   * past its time runs now, once and late, saying so (a reminder is still wanted; its
   * (job, occurrence) key and its move to done are this transaction, so a repeated resume or a
   * restart never runs it twice); a recurring one continues from now, skipping what it was paused
   * through.
   */
  setPaused(tx: Tx, id: number, paused: boolean): boolean {
    const job = this.#stores.jobs.get(id);
    if (!job || job.status === "done") return false;
    const now = this.#options.now();
    const next = paused ? job.nextRunAt : nextOccurrence(job.schedule, now);
    if (!paused && next === null) {
      if ("at" in job.schedule && job.nextRunAt !== null) {
        this.#fire(tx, job, job.nextRunAt, now, "paused past its time, then resumed");
        return true;
      }
      this.#stores.jobs.update(tx, id, { status: "done", nextRunAt: null });
      return true;
    }
    this.#stores.jobs.update(tx, id, { status: paused ? "paused" : "active", nextRunAt: next });
    return true;
  }

  /** Pauses the job whose occurrence message `seq` is, saying why (its chat cannot be reached). */
  pauseJobOf(tx: Tx, seq: number, reason: string): void {
    const id = this.#stores.jobs.jobOf(seq);
    const job = id === null ? null : this.#stores.jobs.get(id);
    if (!job || job.status !== "active") return;
    this.#stores.jobs.update(tx, job.id, { status: "paused", nextRunAt: job.nextRunAt, reason });
  }

  /** Removes job `id`; false when there was none. */
  remove(tx: Tx, id: number): boolean {
    return this.#stores.jobs.remove(tx, id);
  }

  /** The earliest next occurrence of an active job, or null. */
  nextDue(): number | null {
    return this.#stores.jobs.nextDue();
  }

  /** Job `id` as callers see it, or null. */
  view(id: number): JobView | null {
    const job = this.#stores.jobs.get(id);
    if (!job) return null;
    const last_runs = this.#stores.jobs.runs(id).map((run) => {
      const row = this.#stores.inbox.get(run.seq);
      return {
        at: new Date(run.firedAt).toISOString(),
        seq: run.seq,
        status: row ? runStateOf(row.status, row.outcome).status : "unknown" as const,
      };
    });
    return {
      id: job.id,
      prompt: job.prompt,
      schedule: scheduleView(job.schedule),
      status: job.status,
      next_run_at: job.nextRunAt === null ? null : new Date(job.nextRunAt).toISOString(),
      ...(job.reason ? { reason: job.reason } : {}),
      last_runs,
    };
  }

  /** Every job of the session as callers see it, oldest first. */
  list(): JobView[] {
    return this.#stores.jobs.list().map((job) => this.view(job.id)!);
  }

  /**
   * Fires `occurrence` of `job` and moves it on: to its next occurrence after now, or done. It
   * says it is late when it is past `lateAfterMs` (an outage), or always when `lateBecause` says
   * why (a resume).
   */
  #fire(tx: Tx, job: Job, occurrence: number, now: number, lateBecause?: string): void {
    const outage = now - occurrence > (this.#options.lateAfterMs ?? 60_000);
    const late = lateBecause ?? (outage ? "after an outage" : null);
    this.#submit(tx, job, occurrence, late, String(occurrence));
    const next = nextOccurrence(job.schedule, Math.max(now, occurrence));
    this.#stores.jobs.update(tx, job.id, {
      status: next === null ? "done" : "active",
      nextRunAt: next,
    });
  }

  /**
   * The occurrence's message, stored queued like any message (a job never interrupts a turn);
   * `late` (why it is late, or null) prefixes the prompt with its time and why.
   */
  #submit(tx: Tx, job: Job, occurrence: number, late: string | null, tag: string): void {
    const { inbox, jobs, events } = this.#stores;
    const now = this.#options.now();
    const deliveryKey = `job:${job.id}:${tag === "manual" ? `manual:${now}` : tag}`;
    if (inbox.seen(tx, deliveryKey, now) !== null) return;
    const due = new Date(occurrence).toISOString();
    const text = late ? `(Scheduled for ${due}; running late, ${late}.) ${job.prompt}` : job.prompt;
    // Its tokens count against its creator: settled with the record the occurrence's check
    // reserved from (under the same key), or summed there when no cap applies.
    const spend = this.#options.jobSpend?.(
      job.context,
      tag === "manual" ? deliveryKey : `job:${job.id}:${occurrence}`,
    ) ?? null;
    const message: InboundMessage = {
      text,
      deliveryKey,
      context: { ...job.context, job_id: String(job.id), message_id: deliveryKey },
      ...(job.target ? { reply: job.target } : { events: true }),
      ...(spend ? { spend } : {}),
    };
    const seq = inbox.insert(tx, message, now, "queued");
    if (message.events) events.emit(tx, seq, "run.queued", {});
    jobs.recordRun(tx, job.id, tag === "manual" ? -now : occurrence, seq, now);
  }
}

// The session's scheduled jobs: the `job` and `job_run` tables (what to ask, when, where the reply goes, each occurrence's message); runtime-neutral.
import type { ReplyTarget } from "../chat/mod.ts";
import type { Schedule } from "./schedule.ts";
import type { ContextFields } from "../runtime/mod.ts";
import type { LazyTable } from "./lazy_tables.ts";
import { json, num, numOrNull, type SessionDb, str, type Tx } from "./session_db.ts";

/**
 * Scheduled jobs: what to ask, when (the next occurrence), where the reply goes; and each
 * occurrence's message (a job's run), one row per (job, occurrence), so none fires twice.
 */
export const JOB_SCHEMA: readonly string[] = [
  `CREATE TABLE job (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      prompt TEXT NOT NULL,
      schedule TEXT NOT NULL,
      status TEXT NOT NULL,
      next_run_at INTEGER,
      created_at INTEGER NOT NULL,
      target TEXT,
      context TEXT NOT NULL,
      reason TEXT
    )`,
  `CREATE INDEX job_due ON job (status, next_run_at)`,
  `CREATE TABLE job_run (
      job INTEGER NOT NULL,
      occurrence INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      fired_at INTEGER NOT NULL,
      PRIMARY KEY (job, occurrence)
    )`,
  `CREATE INDEX job_run_seq ON job_run (seq)`,
];

/** The job tables, created with a session's first job: most sessions never schedule one. */
export const JOB_TABLES: LazyTable = { name: "job", schema: JOB_SCHEMA };

/** A job's state: runs at its times, paused (by a caller, or by an unreachable chat), or done. */
export type JobStatus = "active" | "paused" | "done";

/** One scheduled job of a session, as stored. */
export interface Job {
  /** Numbered per session; the API's job id adds the session key. */
  id: number;
  prompt: string;
  schedule: Schedule;
  status: JobStatus;
  /** The next occurrence (ms since the epoch); null once done. */
  nextRunAt: number | null;
  createdAt: number;
  /** Where the reply goes (the chat and thread it was created from); none: an API session's run. */
  target: ReplyTarget | null;
  /** The context of the turn or caller that created it: platform, chat, thread, user. */
  context: Omit<ContextFields, "async_delivery">;
  /** Why it paused itself or failed last, when it did. */
  reason: string | null;
}

/** One occurrence that became a message: its time, its message's seq, when it was fired. */
export interface JobRun {
  occurrence: number;
  seq: number;
  firedAt: number;
}

/** The `job` and `job_run` tables (`JOB_TABLES`: none until the first job; reads find nothing). */
export class JobStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Stores a new active job; returns its id. */
  add(tx: Tx, job: Omit<Job, "id" | "status" | "reason">): number {
    this.#db.ensureTable(tx, JOB_TABLES);
    const row = this.#db.exec(
      tx,
      `INSERT INTO job (prompt, schedule, status, next_run_at, created_at, target, context)
       VALUES (?, ?, 'active', ?, ?, ?, ?) RETURNING id`,
      job.prompt,
      JSON.stringify(job.schedule),
      job.nextRunAt,
      job.createdAt,
      job.target ? JSON.stringify(job.target) : null,
      JSON.stringify(job.context),
    )[0];
    return num(row, "id");
  }

  /** Job `id`, or null. */
  get(id: number): Job | null {
    if (!this.#has()) return null;
    const row = this.#db.rows(`SELECT * FROM job WHERE id = ?`, id)[0];
    return row ? _job(row) : null;
  }

  /** Every job of the session, oldest first. */
  list(): Job[] {
    if (!this.#has()) return [];
    return this.#db.rows(`SELECT * FROM job ORDER BY id`).map(_job);
  }

  /** How many jobs are not done (the limit counts these). */
  liveCount(): number {
    if (!this.#has()) return 0;
    return num(this.#db.rows(`SELECT COUNT(*) AS n FROM job WHERE status != 'done'`)[0], "n");
  }

  /** Active jobs due at `now`, earliest first. */
  due(now: number): Job[] {
    if (!this.#has()) return [];
    return this.#db.rows(
      `SELECT * FROM job WHERE status = 'active' AND next_run_at <= ? ORDER BY next_run_at, id`,
      now,
    ).map(_job);
  }

  /** The earliest next occurrence of an active job, or null. */
  nextDue(): number | null {
    if (!this.#has()) return null;
    const row = this.#db.rows(
      `SELECT MIN(next_run_at) AS at FROM job WHERE status = 'active' AND next_run_at IS NOT NULL`,
    )[0];
    return row ? numOrNull(row, "at") : null;
  }

  /** Sets job `id`'s state and next occurrence (and why, when it paused itself). */
  update(
    tx: Tx,
    id: number,
    change: { status: JobStatus; nextRunAt: number | null; reason?: string | null },
  ): void {
    if (!this.#has()) return;
    this.#db.exec(
      tx,
      `UPDATE job SET status = ?, next_run_at = ?, reason = COALESCE(?, reason) WHERE id = ?`,
      change.status,
      change.nextRunAt,
      change.reason ?? null,
      id,
    );
  }

  /** Records that occurrence `occurrence` of job `id` became message `seq`; false when it already had. */
  recordRun(tx: Tx, id: number, occurrence: number, seq: number, now: number): boolean {
    this.#db.ensureTable(tx, JOB_TABLES);
    return this.#db.exec(
      tx,
      `INSERT OR IGNORE INTO job_run (job, occurrence, seq, fired_at) VALUES (?, ?, ?, ?)
       RETURNING seq`,
      id,
      occurrence,
      seq,
      now,
    ).length > 0;
  }

  /** The job whose occurrence message `seq` is, or null. */
  jobOf(seq: number): number | null {
    if (!this.#has()) return null;
    const row = this.#db.rows(`SELECT job FROM job_run WHERE seq = ?`, seq)[0];
    return row ? num(row, "job") : null;
  }

  /** Job `id`'s latest runs, newest first. */
  runs(id: number, limit = 5): JobRun[] {
    if (!this.#has()) return [];
    return this.#db.rows(
      `SELECT occurrence, seq, fired_at FROM job_run WHERE job = ? ORDER BY occurrence DESC, seq DESC
       LIMIT ?`,
      id,
      limit,
    ).map((row) => ({
      occurrence: num(row, "occurrence"),
      seq: num(row, "seq"),
      firedAt: num(row, "fired_at"),
    }));
  }

  /** Deletes job `id` and its runs; false when there was none. */
  remove(tx: Tx, id: number): boolean {
    if (!this.#has()) return false;
    this.#db.exec(tx, `DELETE FROM job_run WHERE job = ?`, id);
    return this.#db.exec(tx, `DELETE FROM job WHERE id = ? RETURNING id`, id).length > 0;
  }

  /** Keeps each job's last 20 runs: a recurring job must not grow its table forever. */
  prune(tx: Tx): void {
    if (!this.#has()) return;
    this.#db.exec(
      tx,
      `DELETE FROM job_run WHERE rowid IN (
         SELECT rowid FROM (
           SELECT rowid, ROW_NUMBER() OVER (PARTITION BY job ORDER BY occurrence DESC) AS n
           FROM job_run) WHERE n > 20)`,
    );
  }

  /** Whether the job tables exist: a session without a job reads nothing and writes nothing. */
  #has(): boolean {
    return this.#db.hasTable(JOB_TABLES);
  }
}

function _job(row: Record<string, unknown>): Job {
  return {
    id: num(row, "id"),
    prompt: str(row, "prompt"),
    schedule: json<Schedule>(row, "schedule")!,
    status: str(row, "status") as JobStatus,
    nextRunAt: numOrNull(row, "next_run_at"),
    createdAt: num(row, "created_at"),
    target: json<ReplyTarget>(row, "target"),
    context: json<Job["context"]>(row, "context") ?? {},
    reason: row.reason === null ? null : str(row, "reason"),
  };
}

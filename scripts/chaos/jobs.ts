// The chaos run's scheduled jobs: runs sessions schedule one-off jobs due while kills land, then each must have fired exactly once; Deno.
import type { ChaosLink } from "./api.ts";
import type { ChaosSession } from "./plan.ts";
import type { Tally } from "./tally.ts";
import type { ChaosJob, ChaosObservation } from "./observation.ts";

/** `job<session>x<n>`: the token a job's prompt carries (its turn's transcript entry shows it). */
export const JOB_TOKEN = /\bjob(\d+)x(\d+)\b/;

/** Row labels of the job checks. */
export const JOB_LABELS = {
  scheduled: "jobs scheduled (POST /v1/jobs, due within seconds)",
  twice: "job occurrences run twice",
  never: "jobs never fired",
} as const;

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** About one job per runs session every 10 s of sending, created in its first 70 %, due 1–6 s later. */
export function planJobs(
  sessions: ChaosSession[],
  spanMs: number,
  random: () => number,
): ChaosJob[] {
  const jobs: ChaosJob[] = [];
  for (const session of sessions.filter((s) => s.way === "runs")) {
    const count = Math.max(1, Math.floor(spanMs / 10_000));
    for (let n = 0; n < count; n++) {
      jobs.push({
        session,
        token: `job${session.index}x${n}`,
        at: Math.floor(random() * 0.7 * spanMs),
        inSeconds: 1 + Math.floor(random() * 6),
      });
    }
  }
  return jobs.sort((a, b) => a.at - b.at);
}

/**
 * Creates each job at its time. A POST whose answer a kill cut off is not blindly sent again (it
 * may have created the job): the session's jobs are looked at first, as a careful client would.
 */
export async function scheduleJobs(link: ChaosLink, jobs: ChaosJob[], t0: number): Promise<void> {
  await Promise.all(jobs.map(async (job) => {
    await _sleep(Math.max(0, t0 + job.at - performance.now()));
    for (let attempt = 0; Date.now() < link.deadline && !job.id; attempt++) {
      if (attempt > 0) {
        job.id = (await _jobsOf(link, job.session)).find((j) => j.prompt.includes(job.token))?.id;
        if (job.id) return;
      }
      // One POST per attempt: a lost answer is looked for above before the next (no blind retry).
      await link.up();
      link.sent("runs");
      let status = 0;
      try {
        const res = await fetch(`${link.url}/v1/jobs`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${link.apiKey}` },
          body: JSON.stringify({
            session: job.session.name,
            prompt: `[tag:s${job.session.index}] ${job.token}`,
            schedule: { in: job.inSeconds },
          }),
          signal: AbortSignal.timeout(15_000),
        });
        status = res.status;
        const body = await res.json().catch(() => ({}));
        if (status === 201) job.id = (body as { id: string }).id;
      } catch {
        // No answer (a kill): looked for before the next attempt.
      }
      if (job.id || (status >= 400 && status < 500 && status !== 429)) return;
      await _sleep(300);
    }
  }));
}

/** After the run: every job of each session that carries a token, with its runs. */
export async function collectJobs(link: ChaosLink, jobs: ChaosJob[]): Promise<void> {
  const sessions = [...new Set(jobs.map((j) => j.session))];
  for (const session of sessions) {
    const all = await _jobsOf(link, session);
    for (const job of jobs.filter((j) => j.session === session)) {
      job.found = all.filter((j) => j.prompt.includes(job.token)).map((j) => ({
        status: j.status,
        runs: j.last_runs,
      }));
    }
  }
}

async function _jobsOf(link: ChaosLink, session: ChaosSession) {
  type _Job = {
    id: string;
    prompt: string;
    status: string;
    last_runs: { status: string; run_id: string | null }[];
  };
  for (let attempt = 0; attempt < 20; attempt++) {
    await link.up();
    try {
      const res = await fetch(`${link.url}/v1/jobs?session=${session.name}`, {
        headers: { authorization: `Bearer ${link.apiKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status === 200) return ((await res.json()) as { data: _Job[] }).data;
      await res.body?.cancel();
    } catch {
      // A kill: asked again.
    }
    await _sleep(300);
  }
  return [];
}

/**
 * Each job scheduled fired exactly once: one job carries its token, done, with one run; and its
 * prompt is at most once in its own session's transcript and in no other.
 */
export function verifyJobs(obs: ChaosObservation, tally: Tally): void {
  if (!obs.ways.includes("runs")) return;
  tally.row(JOB_LABELS.scheduled, false, ["runs"]);
  tally.row(JOB_LABELS.twice, true, ["runs"]);
  tally.row(JOB_LABELS.never, true, ["runs"]);
  const inTranscripts = new Map<string, { key: string; n: number }[]>();
  for (const [key, entries] of obs.transcripts) {
    for (const entry of entries) {
      const token = entry.role === "user" ? JOB_TOKEN.exec(entry.content)?.[0] : undefined;
      if (!token) continue;
      const seen = inTranscripts.get(token) ?? [];
      const here = seen.find((s) => s.key === key);
      if (here) here.n++;
      else seen.push({ key, n: 1 });
      inTranscripts.set(token, seen);
    }
  }
  for (const job of obs.jobs) {
    tally.add(JOB_LABELS.scheduled, "runs");
    const found = job.found ?? [];
    const runs = found.flatMap((f) => f.runs);
    const where = `${job.token} (${job.id ?? "no id"})`;
    if (found.length > 1 || runs.length > 1) {
      tally.add(JOB_LABELS.twice, "runs", 1, `${where}: ${found.length} jobs, ${runs.length} runs`);
    } else if (found.length === 0 || runs.length === 0 || found[0].status !== "done") {
      tally.add(JOB_LABELS.never, "runs", 1, `${where}: ${JSON.stringify(found).slice(0, 120)}`);
    }
    for (const seen of inTranscripts.get(job.token) ?? []) {
      if (seen.key !== job.session.key) {
        tally.add("mixed sessions", "runs", 1, `${job.token} in ${seen.key}'s transcript`);
      } else if (seen.n > 1) {
        tally.add(JOB_LABELS.twice, "runs", 1, `${job.token} ${seen.n} times in its transcript`);
      }
    }
  }
}

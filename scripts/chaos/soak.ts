// The chaos soak: steady traffic over every way in for minutes, a kill every ~2 minutes, workerd RSS and per-minute figures that must not drift; Deno.
import { type ChaosMessage, type ChaosWay, seededRandom } from "./plan.ts";
import { type ChaosReport, formatChaosReport } from "./report.ts";
import { runChaos } from "./run.ts";

/** A soak's settings. */
export interface SoakOptions {
  minutes: number;
  /** Messages per second over all ways. */
  rate: number;
  /** Seconds between kills (default 120; 0: no kills, to see where memory settles). */
  killEverySeconds?: number;
  seed: number;
  ways: ChaosWay[];
  replyInDoubt?: "resend" | "skip";
  platform429Rate?: number;
  platform5xxRate?: number;
  modelFailRate?: number;
  log?: (line: string) => void;
}

/** One minute of a soak. */
export interface SoakMinute {
  minute: number;
  sent: number;
  answered: number;
  p50Ms: number | null;
  p95Ms: number | null;
  /** Messages sent this minute that never got an answer (a dropped chat stream has none to get). */
  unanswered: number;
  /** Median workerd RSS of the minute's samples (MiB). */
  rssMiB: number | null;
  kills: number;
}

/** What a soak measured: the chaos verdict over all its messages, per-minute figures, RSS checks. */
export interface SoakReport {
  ok: boolean;
  chaos: ChaosReport;
  minutes: SoakMinute[];
  /** RSS comparisons: label, before (MiB), after (MiB), growth (%); `judged` ones must be ≤ 10 %. */
  rss: { label: string; before: number; after: number; growth: number; judged: boolean }[];
  drift: { label: string; first: number; second: number; ok: boolean }[];
  problems: string[];
}

/** How long after each start the runtime counts as warm (its sessions loaded, its code hot). */
const _WARM_MS = 45_000;

/** Runs a soak and judges it. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const spanMs = Math.round(options.minutes * 60_000);
  const random = seededRandom(options.seed ^ 0x50a4);
  // A kill every ~2 minutes (± 10 s), none in the last 30 s so the end sample is settled.
  const every = (options.killEverySeconds ?? 120) * 1000;
  const killTimes: number[] = [];
  for (let t = every; every > 0 && t < spanMs - 30_000; t += every) {
    killTimes.push(t + Math.floor((random() - 0.5) * Math.min(20_000, every / 4)));
  }
  const samples: { at: number; rssKiB: number | null }[] = [];
  let sessions: ChaosMessage[][] = [];
  const chaos = await runChaos({
    seed: options.seed,
    messages: Math.round(options.rate * spanMs / 1000),
    // A fixed pool of sessions, so memory measures the traffic, not a growing set of objects.
    sessions: options.ways.length * 4,
    spanMs,
    killTimes,
    holdKill: false,
    // The flood's quota would be sized to minutes of traffic: the soak measures the steady part.
    flood: false,
    ways: options.ways,
    replyInDoubt: options.replyInDoubt,
    platform429Rate: options.platform429Rate,
    platform5xxRate: options.platform5xxRate,
    modelFailRate: options.modelFailRate,
    followEveryRun: true,
    sampleMs: 5_000,
    onSample: (sample) => {
      samples.push({ at: sample.at, rssKiB: sample.rssKiB });
      sessions = sample.sessions;
    },
    deadlineMs: spanMs + 10 * 60_000,
    log: options.log,
  });
  const messages = sessions.flat();
  const start = Math.min(...messages.map((m) => m.sentAt ?? Infinity));
  const minutes: SoakMinute[] = [];
  const count = Math.ceil(spanMs / 60_000);
  for (let i = 0; i < count; i++) {
    const sent = messages.filter((m) =>
      m.sentAt !== undefined && Math.floor((m.sentAt - start) / 60_000) === i
    );
    const latencies = sent.filter((m) => m.answeredAt !== undefined).map((m) =>
      m.answeredAt! - m.sentAt!
    ).sort((a, b) => a - b);
    const rss = samples.filter((s) => Math.floor(s.at / 60_000) === i && s.rssKiB !== null).map((
      s,
    ) => s.rssKiB!);
    minutes.push({
      minute: i + 1,
      sent: sent.length,
      answered: messages.filter((m) =>
        m.answeredAt !== undefined && Math.floor((m.answeredAt - start) / 60_000) === i
      ).length,
      p50Ms: _quantile(latencies, 0.5),
      p95Ms: _quantile(latencies, 0.95),
      unanswered: sent.filter((m) =>
        m.answeredAt === undefined && m.chatMode !== "disconnect"
      )
        .length,
      rssMiB: rss.length ? _quantile(rss.sort((a, b) => a - b), 0.5)! / 1024 : null,
      kills: killTimes.filter((t) => Math.floor(t / 60_000) === i).length,
    });
  }

  const rss = judgeRss(samples, killTimes);
  // Drift: the first half of the minutes against the second (the first minute warms up).
  const full = minutes.slice(1);
  const half = Math.floor(full.length / 2);
  const mean = (xs: number[]) => xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
  const drift: SoakReport["drift"] = [];
  if (half >= 1) {
    const [a, b] = [full.slice(0, half), full.slice(half)];
    const rateA = mean(a.map((m) => m.answered));
    const rateB = mean(b.map((m) => m.answered));
    drift.push({
      label: "answers per minute",
      first: Math.round(rateA),
      second: Math.round(rateB),
      ok: Math.abs(rateB - rateA) <= 0.15 * rateA,
    });
    const p50A = mean(a.map((m) => m.p50Ms ?? 0));
    const p50B = mean(b.map((m) => m.p50Ms ?? 0));
    drift.push({
      label: "p50 answer latency (ms)",
      first: Math.round(p50A),
      second: Math.round(p50B),
      ok: p50B <= 1.5 * p50A + 100,
    });
  }
  const problems = [...chaos.problems];
  for (const r of rss) {
    if (r.judged && r.growth > 10) problems.push(`workerd RSS grew ${r.growth} % (${r.label})`);
  }
  for (const d of drift) if (!d.ok) problems.push(`${d.label} drifted: ${d.first} → ${d.second}`);
  if (!rss.some((r) => r.judged)) {
    problems.push(
      "no judged RSS figure: give it two starts (kills) or a start of 5 minutes or more",
    );
  }
  return {
    ok: chaos.ok && problems.length === chaos.problems.length,
    chaos,
    minutes,
    rss,
    drift,
    problems,
  };
}

/**
 * The RSS figures of a soak from its samples (ms since sending began) and kill times; `judged`
 * ones must stay within 10 %.
 */
export function judgeRss(
  samples: { at: number; rssKiB: number | null }[],
  killTimes: number[],
): SoakReport["rss"] {
  // RSS per start (samples from its warm-up on). Each start fills for minutes (measured with
  // no kills: 192 → 240 → 276 → 303 → 318 → 321 MiB, minute by minute, then flat), so with a kill
  // every two minutes a start never settles: a leak shows as growth between starts at the same
  // age, or as growth in a start that ran long enough to settle.
  const bounds = [0, ...killTimes, Infinity];
  const segments = bounds.slice(0, -1).map((from, i) => ({
    from,
    samples: samples.filter((s) =>
      s.at >= from + _WARM_MS && s.at < bounds[i + 1] && s.rssKiB !== null
    ),
  })).filter((s) => s.samples.length);
  const rss: SoakReport["rss"] = [];
  const mib = (kib: number) => Math.round(kib / 1024 * 10) / 10;
  const compare = (label: string, before: number, after: number, judged: boolean) =>
    rss.push({
      label,
      before: mib(before),
      after: mib(after),
      growth: Math.round((after / before - 1) * 1000) / 10,
      judged,
    });
  if (segments.length) {
    const first = segments[0];
    const last = segments.at(-1)!;
    const end = last.samples.at(-1)!;
    if (segments.length > 1) {
      // Starts that ran their whole period (the last one is cut short by the end).
      const whole = segments.slice(0, -1).at(-1)!;
      const age = end.at - last.from;
      const sameAge = first.samples.findLast((s) => s.at - first.from <= age) ?? first.samples[0];
      compare(
        `end of the soak vs start 1 at the same age (${Math.round(age / 1000)} s)`,
        sameAge.rssKiB!,
        end.rssKiB!,
        true,
      );
      compare(
        `start 1 → start ${segments.length}, both just warm`,
        first.samples[0].rssKiB!,
        last.samples[0].rssKiB!,
        true,
      );
      compare(
        `start 1 → start ${segments.length - 1}, both at their ends`,
        first.samples.at(-1)!.rssKiB!,
        whole.samples.at(-1)!.rssKiB!,
        true,
      );
    }
    for (const [i, segment] of segments.entries()) {
      const span = segment.samples.at(-1)!.at - segment.from;
      const settled = segment.samples.find((s) => s.at >= segment.samples.at(-1)!.at - 120_000)!;
      if (span >= 5 * 60_000) {
        compare(
          `start ${i + 1}, settled: its last two minutes`,
          settled.rssKiB!,
          segment.samples.at(-1)!.rssKiB!,
          true,
        );
      }
      compare(
        `start ${i + 1}: warm → its end (fills, not judged)`,
        segment.samples[0].rssKiB!,
        segment.samples.at(-1)!.rssKiB!,
        false,
      );
    }
    compare(
      "after warm-up (start 1) → end of the soak (not judged)",
      first.samples[0].rssKiB!,
      end.rssKiB!,
      false,
    );
  }
  return rss;
}

function _quantile(sorted: number[], q: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The soak as tables: per minute, RSS, drift, then the chaos verdict over all its messages. */
export function formatSoakReport(report: SoakReport): string {
  const n = (v: number | null) => (v === null ? "–" : Math.round(v).toLocaleString("en-US"));
  return [
    "| minute | sent | answered | p50 ms | p95 ms | never answered | workerd RSS MiB | kills |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...report.minutes.map((m) =>
      `| ${m.minute} | ${m.sent} | ${m.answered} | ${n(m.p50Ms)} | ${
        n(m.p95Ms)
      } | ${m.unanswered} | ${m.rssMiB === null ? "–" : m.rssMiB.toFixed(1)} | ${m.kills} |`
    ),
    "",
    "| workerd RSS | before MiB | after MiB | growth % |",
    "|---|---:|---:|---:|",
    ...report.rss.map((r) =>
      `| ${r.label}${r.judged ? " (must be ≤ 10)" : ""} | ${r.before} | ${r.after} | ${r.growth} |`
    ),
    "",
    "| drift (first half of the minutes → second half) | first | second | ok |",
    "|---|---:|---:|---|",
    ...report.drift.map((d) =>
      `| ${d.label} | ${d.first} | ${d.second} | ${d.ok ? "yes" : "NO"} |`
    ),
    "",
    formatChaosReport(report.chaos),
  ].join("\n");
}

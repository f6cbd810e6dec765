// Bench phases on many sessions: the 1,000-session fan-out (with workerd memory) and the sessions curve, each on a fresh workerd; Deno.
import { okCount, pct, type Sample, unpooledClient } from "./client.ts";
import {
  cpuMs,
  machineCpu,
  type Memory,
  memory,
  ownCpuMs,
  type RssPeak,
  sampleRss,
} from "./proc.ts";
import { r1, r2, type Report, type SessionsPoint } from "./report.ts";
import type { Baton, Rig } from "./rig.ts";
import { cpuPer } from "./phases_turns.ts";

const mib = (kib: number) => r1(kib / 1024);
const p50 = (samples: { ms: number }[]) => pct(samples.map((s) => s.ms), 0.5);
const sessionIds = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Concurrent turns, one per session, over some rounds. */
interface Rounds {
  samples: Sample[];
  wallMs: number;
  turnsPerS: number;
  cpuMsPerTurn: number;
  /** Most requests in flight at once (the client has no pool: all of a round). */
  peakInFlight: number;
}

/** `n` rounds of one turn on each of `sessionsOf(round)`, all sessions of a round at once. */
async function rounds(
  rig: Rig,
  baton: Baton,
  n: number,
  sessionsOf: (round: number) => string[],
  text: (session: string, round: number) => string = (s, r) => `${s} r${r}`,
): Promise<Rounds> {
  const cpu0 = await cpuMs(baton.worker.pids);
  const samples: Sample[] = [];
  let wallMs = 0, inFlight = 0, peakInFlight = 0;
  const turn = async (session: string, round: number) => {
    peakInFlight = Math.max(peakInFlight, ++inFlight);
    try {
      // Hundreds at once: a connection each (client.ts `unpooledClient`).
      return await rig.turn(baton, session, text(session, round), unpooledClient());
    } finally {
      inFlight--;
    }
  };
  for (let r = 0; r < n; r++) {
    const t0 = performance.now();
    samples.push(...await Promise.all(sessionsOf(r).map((s) => turn(s, r))));
    wallMs += performance.now() - t0;
  }
  return {
    samples,
    wallMs,
    turnsPerS: Math.round(samples.length / (wallMs / 1000)),
    cpuMsPerTurn: await cpuPer(baton.worker.pids, cpu0, samples.length),
    peakInFlight,
  };
}

/** A sessions-curve point from its new and warm rounds. */
function sessionsPoint(sessions: number, fresh: Rounds, warm: Rounds): SessionsPoint {
  return {
    sessions,
    new_p50_ms: r2(p50(fresh.samples)),
    new_turns_per_s: fresh.turnsPerS,
    new_cpu_ms_per_turn: fresh.cpuMsPerTurn,
    warm_p50_ms: r2(p50(warm.samples)),
    warm_turns_per_s: warm.turnsPerS,
    warm_cpu_ms_per_turn: warm.cpuMsPerTurn,
    turns: fresh.samples.length + warm.samples.length,
    ok: okCount(fresh.samples) + okCount(warm.samples),
  };
}

/** A rendezvous of `n` parties: each call resolves once all `n` have called. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0, open = () => {};
  const all = new Promise<void>((resolve) => open = resolve);
  return () => {
    if (++arrived === n) open();
    return all;
  };
}

const FANOUT = 1_000;

/**
 * 1,000 new sessions, one turn each, all at once, on a fresh workerd with its RSS sampled; then
 * a warm round on the same sessions. With a baseline, both builds do it side by side, each on a
 * fresh workerd of its own, the new rounds starting together and then the warm rounds, so the
 * machine's noise hits both alike: one after the other, identical builds differed by up to 20 %
 * on a shared 2-core machine, side by side by 1–7 %. Side by side they also share the disk (new
 * sessions create SQLite files) and the cores, which pulls their turns/s together: compare CPU
 * per turn and RSS per session too, and not these turns/s with a run without a baseline.
 */
export async function fanOut(rig: Rig, report: Report): Promise<void> {
  const fresh: Baton[] = [];
  const [startNew, startWarm] = [barrier(rig.batons.length), barrier(rig.batons.length)];
  // Nested onFresh: every build gets its own fresh workerd, all stopped (and cleaned) after.
  const onAllFresh = (i: number): Promise<_FanOut[]> =>
    i === rig.batons.length
      ? Promise.all(fresh.map((b) => _fanOut(rig, b, startNew, startWarm)))
      : rig.onFresh(rig.batons[i], (b) => (fresh.push(b), onAllFresh(i + 1)));
  const results = await onAllFresh(0);
  rig.batons.forEach((baton, i) => _reportFanOut(baton, results[i], rig.batons.length > 1));
  report.series.sessions.push(sessionsPoint(FANOUT, results[0].fresh, results[0].warm));
}

/** What one build's fan-out measured. */
interface _FanOut {
  fresh: Rounds;
  warm: Rounds;
  idle: Memory;
  peak: RssPeak;
  /** Machine-wide busy / iowait / steal shares during the new round; absent without /proc. */
  machine?: Record<"busy" | "iowait" | "steal", number>;
  /** This process's (client and fake model) CPU over the new round's wall time, %. */
  clientBusyPct: number;
  modelPeakInFlight: number;
}

async function _fanOut(
  rig: Rig,
  baton: Baton,
  startNew: () => Promise<void>,
  startWarm: () => Promise<void>,
): Promise<_FanOut> {
  const tag = `fanout-${baton.name}`, pids = baton.worker.pids;
  const ids = sessionIds("bench-fan", FANOUT);
  const idle = await memory(pids);
  await startNew();
  const [machine0, own0] = [await machineCpu(), await ownCpuMs()];
  const sampler = sampleRss(pids, 20);
  const fresh = await rounds(rig, baton, 1, () => ids, (s) => `[tag:${tag}] ${s}`);
  const peak = await sampler.stop();
  const [machine1, own1] = [await machineCpu(), await ownCpuMs()];
  await startWarm();
  const warm = await rounds(rig, baton, 1, () => ids);
  const ticks = machine1.total - machine0.total;
  const share = (t: number) => Math.round(t / ticks * 100);
  const [idleTicks, iowaitTicks] = [
    machine1.idle - machine0.idle,
    machine1.iowait - machine0.iowait,
  ];
  return {
    fresh,
    warm,
    idle,
    peak,
    machine: ticks
      ? {
        busy: share(ticks - idleTicks - iowaitTicks),
        iowait: share(iowaitTicks),
        steal: share(machine1.steal - machine0.steal),
      }
      : undefined,
    clientBusyPct: Math.round((own1 - own0) / fresh.wallMs * 100),
    modelPeakInFlight: rig.fake.maxInFlightBySession.get(tag) ?? 0,
  };
}

function _reportFanOut(baton: Baton, m: _FanOut, sideBySide: boolean): void {
  const { report } = baton, { fresh, warm, peak, idle } = m;
  const ms = fresh.samples.map((s) => s.ms);
  const note = sideBySide ? " (both builds side by side)" : "";
  report.figure(
    `fan-out: new sessions, one turn each, all at once${note}`,
    "fanout_sessions",
    FANOUT,
  );
  report.figure(
    "fan-out: client requests in flight at once (no pool)",
    "fanout_concurrency",
    fresh.peakInFlight,
  );
  report.figure("fan-out: total (ms)", "fanout_total_ms", Math.round(fresh.wallMs));
  report.figure("fan-out: turns/s", "fanout_turns_per_s", fresh.turnsPerS);
  report.joined("fan-out: request p50 / p99 (ms)", {
    fanout_p50_ms: Math.round(pct(ms, 0.5)),
    fanout_p99_ms: Math.round(pct(ms, 0.99)),
  });
  report.figure(
    "fan-out: most model calls in flight at once",
    "fanout_model_peak_in_flight",
    m.modelPeakInFlight,
  );
  report.figure("fan-out: workerd CPU per turn (ms)", "fanout_cpu_ms_per_turn", fresh.cpuMsPerTurn);
  report.figure(
    "fan-out: workerd CPU busy (% of one core)",
    "fanout_cpu_busy_pct",
    Math.round(fresh.cpuMsPerTurn * FANOUT / fresh.wallMs * 100),
  );
  report.figure(
    "fan-out: bench process (client + fake model) CPU busy (% of one core)",
    "fanout_client_cpu_busy_pct",
    m.clientBusyPct,
  );
  if (m.machine) {
    report.joined(
      `fan-out: machine CPU busy / iowait / steal (% of ${navigator.hardwareConcurrency} cores)`,
      {
        fanout_machine_busy_pct: m.machine.busy,
        fanout_machine_iowait_pct: m.machine.iowait,
        fanout_machine_steal_pct: m.machine.steal,
      },
    );
  }
  report.figure("fan-out: workerd RSS idle before (MiB)", "fanout_rss_idle_mib", mib(idle.rssKiB));
  report.figure(
    `fan-out: workerd RSS peak, sampled every 20 ms (MiB, ${peak.samples} samples)`,
    "fanout_rss_peak_mib",
    mib(peak.rssKiB),
  );
  report.figure("fan-out: workerd VmHWM after (MiB)", "fanout_rss_hwm_mib", mib(peak.hwmKiB));
  report.figure(
    "fan-out: RSS growth per new session (KiB)",
    "fanout_rss_kib_per_session",
    Math.round((peak.rssKiB - idle.rssKiB) / FANOUT),
  );
  report.figure("fan-out: OK (200 + echo)", "fanout_ok", `${okCount(fresh.samples)}/${FANOUT}`);
  report.figure(
    "turns/s, 1,000 warm sessions at once (1 round)",
    "turns_per_s_1000_warm",
    warm.turnsPerS,
  );
  report.figure(
    "warm round: OK (200 + echo)",
    "fanout_warm_ok",
    `${okCount(warm.samples)}/${FANOUT}`,
  );
  // A new session's extra cost (its object and SQLite files) as one number: 1 would be free.
  report.ratio(
    "fan-out throughput / warm throughput (new / warm turns/s)",
    "fanout_warm_ratio",
    fresh.turnsPerS / warm.turnsPerS,
  );
}

/** The sessions curve below the fan-out: new rounds, then warm rounds on the last new round's. */
export async function sessionsCurve(rig: Rig, report: Report): Promise<void> {
  const points = await rig.onFresh(rig.baton, async (baton) => {
    const points: SessionsPoint[] = [];
    for (const n of [1, 10, 100, 200, 500]) {
      const newRounds = Math.max(1, Math.min(10, Math.floor(100 / n)));
      const warmRounds = Math.max(1, Math.min(20, Math.floor(1_000 / n)));
      const fresh = await rounds(rig, baton, newRounds, (r) => sessionIds(`bench-n${n}-r${r}`, n));
      const warm = await rounds(
        rig,
        baton,
        warmRounds,
        () => sessionIds(`bench-n${n}-r${newRounds - 1}`, n),
      );
      const point = sessionsPoint(n, fresh, warm);
      console.error(
        `  ${n} at once: new p50 ${point.new_p50_ms} ms, ${point.new_turns_per_s} turns/s` +
          ` (${newRounds} rounds); warm p50 ${point.warm_p50_ms} ms, ${point.warm_turns_per_s}` +
          ` turns/s (${warmRounds} rounds)`,
      );
      if (n === 200) {
        report.figure(
          "turns/s, 200 new sessions at once (1 round)",
          "turns_per_s_200_new",
          fresh.turnsPerS,
        );
        report.figure(
          `turns/s, 200 sessions at once (${warmRounds} more rounds)`,
          "turns_per_s_200",
          warm.turnsPerS,
        );
        report.figure(
          "baton workerd CPU per turn, 200 at once (ms)",
          "baton_cpu_ms_per_turn_200",
          warm.cpuMsPerTurn,
        );
      }
      points.push(point);
    }
    return points;
  });
  const turns = points.reduce((sum, p) => sum + p.turns, 0);
  const ok = points.reduce((sum, p) => sum + p.ok, 0);
  report.figure("sessions curve (1–500 at once) turns OK", "sessions_curve_ok", `${ok}/${turns}`);
  report.series.sessions.push(...points);
}

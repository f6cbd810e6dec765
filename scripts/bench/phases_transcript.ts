// Bench phases on size: turn time as one session's transcript grows to 10,000 messages, and the deploy bundle; Deno.
import { okCount, pct, pool, type Sample } from "./client.ts";
import { cpuMs } from "./proc.ts";
import { r2, type Report, type TranscriptPoint } from "./report.ts";
import type { Rig } from "./rig.ts";
import { ROOT, wranglerBundle } from "./worker.ts";

const p50 = (samples: { ms: number }[]) => pct(samples.map((s) => s.ms), 0.5);

/**
 * Fills one session to 10,000 messages (5,000 turns, 50 in flight), measuring sequential turns
 * at each checkpoint; at the last, alternating with sessions of exactly 10 messages.
 */
export async function longTranscript(rig: Rig, report: Report): Promise<void> {
  const CHECKPOINTS = [10, 100, 1_000, 5_000, 10_000], MEASURE = 40, IN_FLIGHT = 50;
  const SESSION = "bench-long", last = CHECKPOINTS[CHECKPOINTS.length - 1];
  const { baton } = rig, pids = baton.worker.pids;
  const fill: Sample[] = [];
  let messages = 0, fillMs = 0, fillCpu = 0, short: Sample[] = [], long: Sample[] = [];
  for (const checkpoint of CHECKPOINTS) {
    const turns = Math.max(0, (checkpoint - messages) / 2);
    const t0 = performance.now(), cpu0 = await cpuMs(pids);
    const done = fill.length;
    fill.push(...await pool(turns, IN_FLIGHT, (i) => rig.turn(baton, SESSION, `fill ${done + i}`)));
    fillMs += performance.now() - t0;
    fillCpu += await cpuMs(pids) - cpu0;
    messages += 2 * turns;
    if (checkpoint === last) {
      await pool(
        MEASURE * 5,
        IN_FLIGHT,
        (i) => rig.turn(baton, `bench-short-${i % MEASURE}`, `fill ${i}`),
      );
    }
    const at = messages;
    long = [], short = [];
    for (let i = 0; i < MEASURE; i++) {
      long.push(await rig.turn(baton, SESSION, `long ${at} ${i}`));
      if (checkpoint === last) short.push(await rig.turn(baton, `bench-short-${i}`, `short ${i}`));
    }
    messages += 2 * MEASURE;
    const ms = long.map((s) => s.ms);
    const point = { messages: at, p50_ms: r2(pct(ms, 0.5)), p90_ms: r2(pct(ms, 0.9)) };
    report.series.transcript.push(point satisfies TranscriptPoint);
    console.error(`  at ${at} messages: p50 ${point.p50_ms} ms, p90 ${point.p90_ms} ms`);
  }
  const after = (await rig.transcript(baton, SESSION)).length;
  report.figure(
    `fill: ${
      fill.length.toLocaleString("en-US")
    } turns queued on one session, ${IN_FLIGHT} in flight (turns/s)`,
    "fill_turns_per_s",
    Math.round(fill.length / (fillMs / 1000)),
  );
  report.figure(
    "fill: workerd CPU per turn (ms)",
    "fill_cpu_ms_per_turn",
    r2(fillCpu / fill.length),
  );
  report.check(
    "fill: OK / transcript messages after",
    "fill_ok",
    after === messages,
    `${okCount(fill)}/${fill.length} / ${after} (expected ${messages})`,
  );
  const [longP50, shortP50] = [p50(long), p50(short)];
  report.figure(
    `turn p50 at ${last.toLocaleString("en-US")} messages (ms)`,
    "turn_p50_10000_msgs_ms",
    r2(longP50),
  );
  report.figure("turn p50 at 10 messages (ms)", "turn_p50_10_msgs_ms", r2(shortP50));
  report.ratio(
    "p50 ratio 10,000 / 10 messages (alternating)",
    "p50_ratio_10000_10",
    longP50 / shortP50,
  );
  report.figure(
    "long / short turns OK",
    "long_short_ok",
    `${okCount(long)}/${MEASURE}, ${okCount(short)}/${MEASURE}`,
  );
}

/** Builds the deploy bundle with `wrangler deploy --dry-run` and measures it raw and gzipped. */
export async function bundleSize(_rig: Rig, report: Report): Promise<void> {
  const bytes = await Deno.readFile(await wranglerBundle(ROOT, `${ROOT}.tmp/bench-dist`));
  const gz = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  const gzip = (await new Response(gz).arrayBuffer()).byteLength;
  report.figure("deploy bundle index.js raw (bytes)", "bundle_raw_bytes", bytes.length);
  report.figure("deploy bundle index.js gzip (bytes)", "bundle_gzip_bytes", gzip);
}

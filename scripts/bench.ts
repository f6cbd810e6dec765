// `npm run bench [-- --baseline <git-ref>]`: baton against a fake model, phase by phase, optionally side by side with another ref; Deno.
import {
  accessCheck,
  baselineRef,
  buildBaseline,
  bundleSize,
  compactedTranscript,
  cost,
  cpuModel,
  fanOut,
  liveReply,
  longTranscript,
  MAX_QUEUED,
  memoryCost,
  modelCallsPerTurn,
  overhead,
  type Phase,
  r1,
  r2,
  Report,
  responsesContinuation,
  Rig,
  runtimeFloor,
  sameSession,
  sessionsCurve,
  startupCost,
  streaming,
  telegram,
  telegramPhoto,
  writeReport,
} from "./bench/mod.ts";

/** The run, in order; those marked `baseline` also measure the baseline when there is one. */
const PHASES: readonly Phase[] = [
  {
    title: "turn overhead: baton vs floor, alternating, sequential",
    run: overhead,
    baseline: true,
  },
  {
    title: "telegram: webhook → reply, baton vs floor vs peer, alternating",
    run: telegram,
    baseline: true,
  },
  { title: "telegram live reply: first typing, first draft, final reply", run: liveReply },
  { title: "fan-out: 1,000 new sessions at once, fresh workerd", run: fanOut, baseline: true },
  { title: "sessions curve: 1 to 500 at once, fresh workerd", run: sessionsCurve },
  { title: "one session, 200 messages at once", run: sameSession },
  {
    title: "streaming: time to first chunk, baton vs floor vs object floor vs model",
    run: streaming,
    baseline: true,
  },
  {
    title: "responses continuation: session-object calls and time per turn",
    run: responsesContinuation,
    baseline: true,
  },
  { title: "long transcript: filling 5,000 turns", run: longTranscript },
  { title: "model calls per turn", run: modelCallsPerTurn },
  // No baton code: a new vs a warm empty object, and a durable write before a model call.
  { title: "runtime floor: what workerd itself costs", run: runtimeFloor },
  { title: "access check: one sender-record call per message vs none", run: accessCheck },
  { title: "memory: MEMORY=on (one record read per turn) vs off", run: memoryCost },
  { title: "cost: what each kind of turn is billed, counted, and the rows it writes", run: cost },
  { title: "telegram photo: webhook → reply, photo vs text, alternating", run: telegramPhoto },
  {
    title: "long transcript, compaction on: 10,000 vs 10 messages, one compaction",
    run: compactedTranscript,
  },
];
/** Run once every Worker has stopped, so that they do not disturb the timings. */
const AFTER_WORKERS: readonly Phase[] = [
  { title: "deploy bundle: wrangler deploy --dry-run", run: bundleSize },
  {
    title: "start-up: bundle weight by package, wrangler check startup (compile + evaluation)",
    run: startupCost,
  },
];

/** Runs phase number `n`, logging it and its duration; one that throws fails the run, not the rest. */
async function runPhase(phase: Phase, n: number, rig: Rig, report: Report): Promise<void> {
  const also = phase.baseline && rig.batons.length > 1 ? ", and on the baseline" : "";
  console.error(`${n}/${PHASES.length + AFTER_WORKERS.length} ${phase.title}${also}`);
  const t0 = performance.now();
  try {
    await phase.run(rig, report);
  } catch (e) {
    report.fail(`phase "${phase.title}" threw: ${e instanceof Error ? e.stack : e}`);
  } finally {
    console.error(`  (${r1((performance.now() - t0) / 1000)} s)`);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = Deno.loadavg();
  let ref: string | undefined;
  try {
    ref = baselineRef(Deno.args);
  } catch (e) {
    console.error(`${(e as Error).message}\nusage: npm run bench [-- --baseline <git-ref>]`);
    Deno.exit(2);
  }
  const build = ref === undefined ? undefined : await buildBaseline(ref);
  const baseline = build && { ref: build.ref, commit: build.commit, subject: build.subject };
  if (baseline) console.error(`baseline ${ref} = ${baseline.commit} (${baseline.subject})`);
  const report = new Report();
  report.figure(
    "baton MAX_QUEUED for this run (default 32; 429 queue_full beyond)",
    "max_queued",
    MAX_QUEUED,
  );
  const only = _onlyPhases();
  const rig = await Rig.start(report, build);
  try {
    for (const [i, phase] of PHASES.entries()) {
      if (!only || only.has(i + 1)) await runPhase(phase, i + 1, rig, report);
    }
  } finally {
    await rig.close();
  }
  for (const [i, phase] of AFTER_WORKERS.entries()) {
    const n = PHASES.length + i + 1;
    if (!only || only.has(n)) await runPhase(phase, n, rig, report);
  }
  if (only) return _warnOfFailures(report); // a partial run is for looking, not for the record

  const machine = {
    nproc: navigator.hardwareConcurrency,
    cpu: await cpuModel(),
    os: `${Deno.build.os} ${Deno.osRelease()} ${Deno.build.arch}`,
    deno: Deno.version.deno,
    loadavg_before: loadBefore.map(r2),
    loadavg_after: Deno.loadavg().map(r2),
  };
  const runSeconds = r1((performance.now() - started) / 1000);
  await writeReport(report, { machine, runSeconds, baseline }, new URL("../", import.meta.url));
  const load = `${machine.loadavg_before.join(" ")} → ${machine.loadavg_after.join(" ")}`;
  console.log(
    `machine: nproc ${machine.nproc}, ${machine.cpu}, ${machine.os}, deno ${machine.deno}; ` +
      `loadavg ${load}; run ${runSeconds} s`,
  );
  _warnOfFailures(report);
}

/** Says how many checks or requests failed and fails the run if any did (a partial run too). */
function _warnOfFailures(report: Report): void {
  if (!report.failures.length) return;
  const first = report.failures[0].slice(0, 300);
  console.log(`WARNING: ${report.failures.length} checks/requests failed; first: ${first}`);
  Deno.exitCode = 1;
}

/** `BENCH_PHASES=1,2` runs only those phases and writes no results (for quick comparisons). */
function _onlyPhases(): Set<number> | null {
  const value = Deno.env.get("BENCH_PHASES");
  return value ? new Set(value.split(",").map(Number)) : null;
}

await main();

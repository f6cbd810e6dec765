// `npm run bench`: baton's turn overhead, throughput and bundle size against a zero-latency fake model; Deno.
import { startFakeLlm } from "../test/_support/fake_llm.ts";
import { startWorker, type TestWorker } from "../test/_support/worker.ts";

const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
const API_KEY = "bench-key";
const root = new URL("../", import.meta.url);

/** Every request that was not a 200 echoing its input: status and body. */
const failures: string[] = [];

/** One request's result: wall time, and whether it was a 200 whose reply echoed the input. */
interface Sample {
  ms: number;
  ok: boolean;
}

/** The part of a chat completion the bench reads. */
interface Completion {
  choices?: { message?: { content?: unknown } }[];
}

function chatBody(text: string): string {
  return JSON.stringify({ model: "any", messages: [{ role: "user", content: text }] });
}

async function timed(url: string, headers: Record<string, string>, text: string): Promise<Sample> {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers, body: chatBody(text) });
  const body = await res.json().catch(() => null) as Completion | null;
  const ms = performance.now() - t0;
  const ok = res.status === 200 && body?.choices?.[0]?.message?.content === text;
  if (!ok && failures.push(`${res.status} ${JSON.stringify(body)}`) === 1) {
    console.error(`  first failed request: ${failures[0].slice(0, 300)}`);
  }
  return { ms, ok };
}

/** One chat completion through baton on session `session`. */
function batonTurn(baton: TestWorker, session: string, text: string): Promise<Sample> {
  return timed(new URL("v1/chat/completions", baton.url).href, {
    authorization: `Bearer ${API_KEY}`,
    "content-type": "application/json",
    "x-session-id": session,
  }, text);
}

/** The same body through the floor Worker, which only calls the model. */
function floorCall(floor: TestWorker, text: string): Promise<Sample> {
  return timed(floor.url, { "content-type": "application/json" }, text);
}

/** Nearest-rank percentile of `values` (p in 0..1). */
function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** Runs `fn(0..n-1)` with at most `concurrency` in flight. */
async function pool<T>(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, lane));
  return out;
}

function okCount(samples: Sample[]): number {
  return samples.filter((s) => s.ok).length;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Builds the deploy bundle with wrangler and measures it raw and gzipped. */
async function bundleSize(): Promise<{ raw: number; gzip: number }> {
  const outdir = ".tmp/bench-dist";
  const out = await new Deno.Command(new URL("node_modules/.bin/wrangler", root).pathname, {
    args: ["deploy", "--dry-run", "--outdir", outdir],
    cwd: root.pathname,
    env: OFFLINE_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`wrangler deploy --dry-run failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  const bytes = await Deno.readFile(new URL(`${outdir}/index.js`, root));
  const gz = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return { raw: bytes.length, gzip: (await new Response(gz).arrayBuffer()).byteLength };
}

/** Pids of the workerd processes this process started (Linux /proc; empty elsewhere). */
async function workerdPids(): Promise<number[]> {
  const pids: number[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
      const m = /^\d+ \((.*)\) \S+ (\d+) /.exec(stat);
      if (m?.[1] === "workerd" && Number(m[2]) === Deno.pid) pids.push(Number(entry.name));
    }
  } catch {
    // No /proc: the CPU figures are left out.
  }
  return pids;
}

/** User + system CPU time of `pids` in ms (Linux /proc, clock ticks of 10 ms); NaN if unknown. */
async function cpuMs(pids: number[]): Promise<number> {
  if (!pids.length) return NaN;
  let ticks = 0;
  for (const pid of pids) {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

async function cpuModel(): Promise<string> {
  try {
    const info = await Deno.readTextFile("/proc/cpuinfo");
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

const rows: [string, string][] = [];
const figures: Record<string, number | string> = {};
/** Records one figure: a table row and a key in results.json (`shown` overrides the cell). */
function report(label: string, key: string, value: number | string, shown?: string): void {
  rows.push([label, shown ?? String(value)]);
  figures[key] = value;
  console.error(`  ${label}: ${shown ?? value}`);
}

const started = performance.now();
const loadBefore = Deno.loadavg();
const fake = await startFakeLlm();
let baton: TestWorker | undefined;
let floor: TestWorker | undefined;
try {
  baton = await startWorker({
    // MAX_QUEUED (default 32 per session) above the 50-message burst and the fill's 50 in flight.
    vars: {
      LLM_BASE_URL: fake.url,
      LLM_API_KEY: "x",
      GATEWAY_API_KEY: API_KEY,
      MAX_QUEUED: "100",
    },
  });
  const batonPids = await workerdPids();
  floor = await startWorker({
    entry: "scripts/_floor_worker.ts",
    vars: { LLM_BASE_URL: fake.url, LLM_API_KEY: "x" },
  });
  const floorPids = (await workerdPids()).filter((pid) => !batonPids.includes(pid));
  const b = baton, f = floor;
  /** workerd CPU ms per unit of work since `since` (a cpuMs reading). */
  const cpuPer = async (pids: number[], since: number, n: number) =>
    r2((await cpuMs(pids) - since) / n);

  // 1. Turn overhead: sequential, baton and floor alternating so noise hits both alike.
  console.error("1/5 turn overhead (baton vs floor, alternating, sequential)");
  const WARM = 30, N = 300;
  const batonS: Sample[] = [], floorS: Sample[] = [];
  let batonCpu0 = 0, floorCpu0 = 0;
  for (let i = 0; i < WARM + N; i++) {
    if (i === WARM) [batonCpu0, floorCpu0] = [await cpuMs(batonPids), await cpuMs(floorPids)];
    const bs = await batonTurn(b, "bench-overhead", `overhead ${i}`);
    const fs = await floorCall(f, `floor ${i}`);
    if (i >= WARM) batonS.push(bs), floorS.push(fs);
  }
  const bMs = batonS.map((s) => s.ms), fMs = floorS.map((s) => s.ms);
  report("baton turn p50 (ms)", "baton_turn_p50_ms", r2(pct(bMs, 0.5)));
  report("baton turn p99 (ms)", "baton_turn_p99_ms", r2(pct(bMs, 0.99)));
  report("floor call p50 (ms)", "floor_p50_ms", r2(pct(fMs, 0.5)));
  report("floor call p99 (ms)", "floor_p99_ms", r2(pct(fMs, 0.99)));
  const ratio = r2(pct(bMs, 0.5) / pct(fMs, 0.5));
  report("p50 ratio baton/floor", "p50_ratio_baton_floor", ratio, `${ratio}×`);
  report(
    "baton workerd CPU per turn (ms)",
    "baton_cpu_ms_per_turn",
    await cpuPer(batonPids, batonCpu0, N),
  );
  report(
    "floor workerd CPU per call (ms)",
    "floor_cpu_ms_per_call",
    await cpuPer(floorPids, floorCpu0, N),
  );
  report(
    "overhead requests OK",
    "overhead_ok",
    `${okCount(batonS)}/${N} baton, ${okCount(floorS)}/${N} floor`,
  );

  // 2. Many sessions at once: 200 concurrent turns, each its own session, a few rounds.
  console.error("2/5 200 sessions at once");
  const SESSIONS = 200, ROUNDS = 5;
  const round = async (r: number) => {
    const t0 = performance.now();
    const s = await Promise.all(
      Array.from({ length: SESSIONS }, (_, i) => batonTurn(b, `bench-many-${i}`, `r${r} s${i}`)),
    );
    return { ms: performance.now() - t0, ok: okCount(s) };
  };
  const cold = await round(0);
  report(
    "turns/s, 200 new sessions at once (1 round)",
    "turns_per_s_200_new",
    Math.round(SESSIONS / (cold.ms / 1000)),
  );
  const manyCpu0 = await cpuMs(batonPids);
  let manyMs = 0, manyOk = cold.ok;
  for (let r = 1; r <= ROUNDS; r++) {
    const res = await round(r);
    manyMs += res.ms;
    manyOk += res.ok;
  }
  report(
    `turns/s, 200 sessions at once (${ROUNDS} more rounds)`,
    "turns_per_s_200",
    Math.round((SESSIONS * ROUNDS) / (manyMs / 1000)),
  );
  report(
    "baton workerd CPU per turn, 200 at once (ms)",
    "baton_cpu_ms_per_turn_200",
    await cpuPer(batonPids, manyCpu0, SESSIONS * ROUNDS),
  );
  report("200-session turns OK", "turns_200_ok", `${manyOk}/${SESSIONS * (ROUNDS + 1)}`);

  // 3. One session, 50 messages at once: they queue and run one at a time.
  console.error("3/5 same-session burst");
  const BURST = 50;
  const t3 = performance.now();
  const burst = await Promise.all(
    Array.from({ length: BURST }, (_, i) => batonTurn(b, "bench-burst", `burst ${i}`)),
  );
  const burstMs = performance.now() - t3;
  report("50 at once, one session: total (ms)", "burst_total_ms", Math.round(burstMs));
  report(
    "50 at once, one session: turns/s",
    "burst_turns_per_s",
    Math.round(BURST / (burstMs / 1000)),
  );
  report("50 at once, one session: OK (200 + echo)", "burst_ok", `${okCount(burst)}/${BURST}`);

  // 4. Turn time on a 5,000-message transcript vs a 10-message one (sequential, alternating).
  console.error("4/5 long transcript (filling 2,500 turns)");
  const FILL = 2_500, SHORT_FILL = 5, MEASURE = 50;
  const t4 = performance.now();
  const fillCpu0 = await cpuMs(batonPids);
  const fill = await pool(FILL, 50, (i) => batonTurn(b, "bench-long", `fill ${i}`));
  const fillMs = performance.now() - t4;
  const fillCpu = await cpuPer(batonPids, fillCpu0, FILL);
  await pool(SHORT_FILL, 1, (i) => batonTurn(b, "bench-short", `fill ${i}`));
  const state = await (await b.fetch("/v1/sessions/api:bench-long", {
    headers: { authorization: `Bearer ${API_KEY}` },
  })).json() as { messages?: unknown[] };
  const longS: Sample[] = [], shortS: Sample[] = [];
  for (let i = 0; i < MEASURE; i++) {
    longS.push(await batonTurn(b, "bench-long", `long ${i}`));
    shortS.push(await batonTurn(b, "bench-short", `short ${i}`));
  }
  const longP50 = pct(longS.map((s) => s.ms), 0.5), shortP50 = pct(shortS.map((s) => s.ms), 0.5);
  report(
    "fill: 2,500 turns queued on one session (turns/s)",
    "fill_turns_per_s",
    Math.round(FILL / (fillMs / 1000)),
  );
  report("fill: workerd CPU per turn (ms)", "fill_cpu_ms_per_turn", fillCpu);
  report(
    "fill: OK / transcript messages after",
    "fill_ok",
    `${okCount(fill)}/${FILL} / ${state.messages?.length}`,
  );
  report("turn p50 at 5,000 messages (ms)", "turn_p50_5000_msgs_ms", r2(longP50));
  report("turn p50 at 10 messages (ms)", "turn_p50_10_msgs_ms", r2(shortP50));
  const longRatio = r2(longP50 / shortP50);
  report("p50 ratio 5,000 / 10 messages", "p50_ratio_5000_10", longRatio, `${longRatio}×`);
  report(
    "long / short turns OK",
    "long_short_ok",
    `${okCount(longS)}/${MEASURE}, ${okCount(shortS)}/${MEASURE}`,
  );

  // Sanity: with the echo responder a turn is exactly one model call.
  const batonTurns = WARM + N + SESSIONS * (ROUNDS + 1) + BURST + FILL + SHORT_FILL + 2 * MEASURE;
  const calls = fake.requests.length - (WARM + N);
  report("model calls per baton turn", "model_calls_per_turn", r2(calls / batonTurns));
} finally {
  await baton?.dispose();
  await floor?.dispose();
  await fake.close();
}

// 5. Deploy bundle size, after the workers are gone so the build does not disturb the timings.
console.error("5/5 deploy bundle (wrangler deploy --dry-run)");
const size = await bundleSize();
report("deploy bundle index.js raw (bytes)", "bundle_raw_bytes", size.raw);
report("deploy bundle index.js gzip (bytes)", "bundle_gzip_bytes", size.gzip);

const machine = {
  nproc: navigator.hardwareConcurrency,
  cpu: await cpuModel(),
  os: `${Deno.build.os} ${Deno.osRelease()} ${Deno.build.arch}`,
  deno: Deno.version.deno,
  loadavg_before: loadBefore.map(r2),
  loadavg_after: Deno.loadavg().map(r2),
};
const totalS = r1((performance.now() - started) / 1000);

const table = ["| figure | value |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`)];
console.log(`\n${table.join("\n")}\n`);
const load = `${machine.loadavg_before.join(" ")} → ${machine.loadavg_after.join(" ")}`;
console.log(
  `machine: nproc ${machine.nproc}, ${machine.cpu}, ${machine.os}, deno ${machine.deno}; ` +
    `loadavg ${load}; run ${totalS} s`,
);

await Deno.mkdir(new URL("bench/", root), { recursive: true });
const results = {
  timestamp: new Date().toISOString(),
  machine,
  run_seconds: totalS,
  failed_requests: failures.length,
  figures,
};
await Deno.writeTextFile(
  new URL("bench/results.json", root),
  JSON.stringify(results, null, 2) + "\n",
);
console.log("wrote bench/results.json");
if (failures.length) {
  console.log(`WARNING: ${failures.length} requests failed; first: ${failures[0].slice(0, 300)}`);
  Deno.exitCode = 1;
}

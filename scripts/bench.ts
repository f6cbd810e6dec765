// `npm run bench`: baton's turn overhead, fan-out, queueing, long transcripts, streaming, memory and bundle size against a fake model; Deno.
import { type FakeLlm, startFakeLlm } from "../test/_support/fake_llm.ts";
import { startWorker, type TestWorker } from "../test/_support/worker.ts";
import {
  failures,
  okCount,
  pct,
  pool,
  postChat,
  postChatStream,
  type Sample,
  type StreamSample,
} from "./_bench_client.ts";
import {
  cpuModel,
  cpuMs,
  machineCpu,
  memory,
  miniflareTmpDir,
  ownCpuMs,
  sampleRss,
  workerdPids,
} from "./_bench_proc.ts";
import { lineChart, lineCharts } from "./_svg_chart.ts";

const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
const API_KEY = "bench-key";
/** The bench worker's per-session queue limit (default 32): above the 200-message burst. */
const MAX_QUEUED = 256;
const root = new URL("../", import.meta.url);

/** Everything a phase measures against. */
interface Rig {
  baton: TestWorker;
  floor: TestWorker;
  fake: FakeLlm;
  batonPids: number[];
  floorPids: number[];
}

/** Starts a baton Worker in its own workerd and finds that process's pids. */
async function startBaton(fake: FakeLlm): Promise<{ worker: TestWorker; pids: number[] }> {
  const before = await workerdPids();
  const worker = await startWorker({
    vars: {
      LLM_BASE_URL: fake.url,
      LLM_API_KEY: "x",
      GATEWAY_API_KEY: API_KEY,
      MAX_QUEUED: String(MAX_QUEUED),
    },
  });
  return { worker, pids: (await workerdPids()).filter((pid) => !before.includes(pid)) };
}

/**
 * Runs `fn` on a baton of its own (one warm-up turn first): workerd keeps every session object it
 * created in memory, and past about 2,000 of them new ones fail with SQLITE_NOMEM. Returns once
 * Miniflare's fire-and-forget removal of the temp dir is done: deleting thousands of SQLite files
 * on this process's event loop slows every request for seconds.
 */
async function onFreshBaton<T>(rig: Rig, fn: (rig: Rig) => Promise<T>): Promise<T> {
  const { worker, pids } = await startBaton(rig.fake);
  let tmpDir: string | undefined;
  try {
    const fresh = { ...rig, baton: worker, batonPids: pids };
    await batonTurn(fresh, "bench-warm-up", "warm-up");
    tmpDir = await miniflareTmpDir(pids);
    return await fn(fresh);
  } finally {
    await worker.dispose();
    const t0 = performance.now();
    while (tmpDir && await Deno.stat(tmpDir).then(() => true, () => false)) {
      if (performance.now() - t0 > 60_000) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    console.error(
      `  (workerd stopped, temp dir removed in ${r1((performance.now() - t0) / 1000)} s)`,
    );
  }
}

/** Requests sent, for the one-model-call-per-turn check and the fan-out's real concurrency. */
const counts = { batonTurns: 0, otherModelCalls: 0, inFlight: 0, peakInFlight: 0 };

function batonHeaders(session: string): Record<string, string> {
  return {
    authorization: `Bearer ${API_KEY}`,
    "content-type": "application/json",
    "x-session-id": session,
  };
}

/** One chat completion through baton on session `session`. */
async function batonTurn(rig: Rig, session: string, text: string): Promise<Sample> {
  counts.batonTurns++;
  counts.peakInFlight = Math.max(counts.peakInFlight, ++counts.inFlight);
  try {
    return await postChat(
      new URL("v1/chat/completions", rig.baton.url).href,
      batonHeaders(session),
      text,
    );
  } finally {
    counts.inFlight--;
  }
}

/** The same body through the floor Worker, which only calls the model. */
function floorCall(rig: Rig, text: string): Promise<Sample> {
  counts.otherModelCalls++;
  return postChat(rig.floor.url, { "content-type": "application/json" }, text);
}

/** One streamed turn through baton, through the floor Worker, or straight to the fake model. */
function streamCall(
  rig: Rig,
  via: "baton" | "floor" | "model",
  text: string,
): Promise<StreamSample> {
  if (via === "baton") counts.batonTurns++;
  else counts.otherModelCalls++;
  if (via === "baton") {
    return postChatStream(
      new URL("v1/chat/completions", rig.baton.url).href,
      batonHeaders("bench-stream"),
      text,
    );
  }
  const url = via === "floor" ? rig.floor.url : `${rig.fake.url}/chat/completions`;
  return postChatStream(url, { "content-type": "application/json" }, text);
}

/** A session's transcript (current conversation). */
async function transcript(rig: Rig, session: string): Promise<{ role: string; content: string }[]> {
  const res = await rig.baton.fetch(`/v1/sessions/api:${session}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const body = await res.json() as { messages?: { role: string; content: string }[] };
  return body.messages ?? [];
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const mib = (kib: number) => r1(kib / 1024);
const p50 = (samples: { ms: number }[]) => pct(samples.map((s) => s.ms), 0.5);

const rows: [string, string][] = [];
const figures: Record<string, number | string> = {};
/** Records one figure: a table row and a key in results.json (`shown` overrides the cell). */
function report(label: string, key: string, value: number | string, shown?: string): void {
  rows.push([label, shown ?? String(value)]);
  figures[key] = value;
  console.error(`  ${label}: ${shown ?? value}`);
}

/** Records figures shown in one table row as "a / b / …" under `label`. */
function reportJoined(label: string, values: Record<string, number>): void {
  Object.assign(figures, values);
  rows.push([label, Object.values(values).join(" / ")]);
  console.error(`  ${label}: ${Object.values(values).join(" / ")}`);
}

/** Records a check that must hold; a false one fails the run. */
function check(label: string, key: string, ok: boolean, detail: string): void {
  report(label, key, detail);
  if (!ok) failures.push(`${label}: ${detail}`);
}

/** workerd CPU ms per unit of work since `since` (a cpuMs reading). */
async function cpuPer(pids: number[], since: number, n: number): Promise<number> {
  return r2((await cpuMs(pids) - since) / n);
}

/** Turn latency p50/p99 of baton vs the floor Worker, sequential and alternating. */
async function overhead(rig: Rig): Promise<void> {
  const WARM = 30, N = 300;
  const batonS: Sample[] = [], floorS: Sample[] = [];
  let batonCpu0 = 0, floorCpu0 = 0;
  for (let i = 0; i < WARM + N; i++) {
    if (i === WARM) {
      [batonCpu0, floorCpu0] = [await cpuMs(rig.batonPids), await cpuMs(rig.floorPids)];
    }
    const bs = await batonTurn(rig, "bench-overhead", `overhead ${i}`);
    const fs = await floorCall(rig, `floor ${i}`);
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
    await cpuPer(rig.batonPids, batonCpu0, N),
  );
  report(
    "floor workerd CPU per call (ms)",
    "floor_cpu_ms_per_call",
    await cpuPer(rig.floorPids, floorCpu0, N),
  );
  report(
    "overhead requests OK",
    "overhead_ok",
    `${okCount(batonS)}/${N} baton, ${okCount(floorS)}/${N} floor`,
  );
}

/** Concurrent turns, one per session, over some rounds. */
interface Rounds {
  samples: Sample[];
  wallMs: number;
  turnsPerS: number;
  cpuMsPerTurn: number;
}

/** `rounds` rounds of one turn on each of `sessionsOf(round)`, all sessions of a round at once. */
async function rounds(
  rig: Rig,
  n: number,
  sessionsOf: (round: number) => string[],
  text: (session: string, round: number) => string = (s, r) => `${s} r${r}`,
): Promise<Rounds> {
  const cpu0 = await cpuMs(rig.batonPids);
  const samples: Sample[] = [];
  let wallMs = 0;
  for (let r = 0; r < n; r++) {
    const t0 = performance.now();
    const sessions = sessionsOf(r);
    samples.push(...await Promise.all(sessions.map((s) => batonTurn(rig, s, text(s, r)))));
    wallMs += performance.now() - t0;
  }
  return {
    samples,
    wallMs,
    turnsPerS: Math.round(samples.length / (wallMs / 1000)),
    cpuMsPerTurn: await cpuPer(rig.batonPids, cpu0, samples.length),
  };
}

/** One point of the sessions curve: new sessions, then the same sessions again (warm). */
interface SessionsPoint {
  sessions: number;
  new_p50_ms: number;
  new_turns_per_s: number;
  new_cpu_ms_per_turn: number;
  warm_p50_ms: number;
  warm_turns_per_s: number;
  warm_cpu_ms_per_turn: number;
  turns: number;
  ok: number;
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

const sessionIds = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** 1,000 new sessions, one turn each, all at once, with workerd RSS sampled; then a warm round. */
async function fanOut(rig: Rig): Promise<SessionsPoint> {
  const N = 1_000, TAG = "fanout";
  const ids = sessionIds("bench-fan", N);
  const idle = await memory(rig.batonPids);
  counts.peakInFlight = 0;
  const [machine0, own0] = [await machineCpu(), await ownCpuMs()];
  const sampler = sampleRss(rig.batonPids, 20);
  const fresh = await rounds(rig, 1, () => ids, (s) => `[tag:${TAG}] ${s}`);
  const peak = await sampler.stop();
  const [machine1, own1] = [await machineCpu(), await ownCpuMs()];
  const concurrency = counts.peakInFlight;
  const warm = await rounds(rig, 1, () => ids);
  const machineTicks = machine1.total - machine0.total;
  const share = (ticks: number) => Math.round(ticks / machineTicks * 100);
  const [idleTicks, iowaitTicks] = [
    machine1.idle - machine0.idle,
    machine1.iowait - machine0.iowait,
  ];
  const ms = fresh.samples.map((s) => s.ms);
  report("fan-out: new sessions, one turn each, all at once", "fanout_sessions", N);
  report("fan-out: client requests in flight at once (no pool)", "fanout_concurrency", concurrency);
  report("fan-out: total (ms)", "fanout_total_ms", Math.round(fresh.wallMs));
  report("fan-out: turns/s", "fanout_turns_per_s", fresh.turnsPerS);
  reportJoined("fan-out: request p50 / p99 (ms)", {
    fanout_p50_ms: Math.round(pct(ms, 0.5)),
    fanout_p99_ms: Math.round(pct(ms, 0.99)),
  });
  report(
    "fan-out: most model calls in flight at once",
    "fanout_model_peak_in_flight",
    rig.fake.maxInFlightBySession.get(TAG) ?? 0,
  );
  report("fan-out: workerd CPU per turn (ms)", "fanout_cpu_ms_per_turn", fresh.cpuMsPerTurn);
  report(
    "fan-out: workerd CPU busy (% of one core)",
    "fanout_cpu_busy_pct",
    Math.round(fresh.cpuMsPerTurn * N / fresh.wallMs * 100),
  );
  report(
    "fan-out: bench process (client + fake model) CPU busy (% of one core)",
    "fanout_client_cpu_busy_pct",
    Math.round((own1 - own0) / fresh.wallMs * 100),
  );
  if (machineTicks) {
    reportJoined(
      `fan-out: machine CPU busy / iowait / steal (% of ${navigator.hardwareConcurrency} cores)`,
      {
        fanout_machine_busy_pct: share(machineTicks - idleTicks - iowaitTicks),
        fanout_machine_iowait_pct: share(iowaitTicks),
        fanout_machine_steal_pct: share(machine1.steal - machine0.steal),
      },
    );
  }
  report("fan-out: workerd RSS idle before (MiB)", "fanout_rss_idle_mib", mib(idle.rssKiB));
  report(
    `fan-out: workerd RSS peak, sampled every 20 ms (MiB, ${peak.samples} samples)`,
    "fanout_rss_peak_mib",
    mib(peak.rssKiB),
  );
  report("fan-out: workerd VmHWM after (MiB)", "fanout_rss_hwm_mib", mib(peak.hwmKiB));
  report(
    "fan-out: RSS growth per new session (KiB)",
    "fanout_rss_kib_per_session",
    Math.round((peak.rssKiB - idle.rssKiB) / N),
  );
  report("fan-out: OK (200 + echo)", "fanout_ok", `${okCount(fresh.samples)}/${N}`);
  report("turns/s, 1,000 warm sessions at once (1 round)", "turns_per_s_1000_warm", warm.turnsPerS);
  return sessionsPoint(N, fresh, warm);
}

/** The sessions curve below the fan-out: new rounds, then warm rounds on the last new round's. */
async function sessionsCurve(rig: Rig): Promise<SessionsPoint[]> {
  const points: SessionsPoint[] = [];
  for (const n of [1, 10, 100, 200, 500]) {
    const newRounds = Math.max(1, Math.min(10, Math.floor(100 / n)));
    const warmRounds = Math.max(1, Math.min(20, Math.floor(1_000 / n)));
    const fresh = await rounds(rig, newRounds, (r) => sessionIds(`bench-n${n}-r${r}`, n));
    const warm = await rounds(
      rig,
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
      report("turns/s, 200 new sessions at once (1 round)", "turns_per_s_200_new", fresh.turnsPerS);
      report(
        `turns/s, 200 sessions at once (${warmRounds} more rounds)`,
        "turns_per_s_200",
        warm.turnsPerS,
      );
      report(
        "baton workerd CPU per turn, 200 at once (ms)",
        "baton_cpu_ms_per_turn_200",
        warm.cpuMsPerTurn,
      );
    }
    points.push(point);
  }
  const turns = points.reduce((sum, p) => sum + p.turns, 0);
  const ok = points.reduce((sum, p) => sum + p.ok, 0);
  report("sessions curve (1–500 at once) turns OK", "sessions_curve_ok", `${ok}/${turns}`);
  return points;
}

/** 200 messages at once to one session: each must run once, one at a time, in queue order. */
async function sameSession(rig: Rig): Promise<void> {
  const N = 200, SESSION = "bench-burst";
  const texts = Array.from({ length: N }, (_, i) => `[tag:${SESSION}] burst ${i}`);
  const completed: string[] = [];
  const t0 = performance.now();
  const samples = await Promise.all(texts.map(async (text) => {
    const sample = await batonTurn(rig, SESSION, text);
    completed.push(text);
    return sample;
  }));
  const ms = performance.now() - t0;
  const modelOrder = rig.fake.requests.filter((r) => r.sessionTag === SESSION)
    .map((r) => r.lastUserText);
  const messages = await transcript(rig, SESSION);
  const pairsInModelOrder = messages.length === 2 * N &&
    messages.every((m, i) =>
      i % 2 === 0
        ? m.role === "user" && m.content === modelOrder[i / 2]
        : m.role === "assistant" && m.content === messages[i - 1].content
    );
  const runPosition = new Map(modelOrder.map((text, i) => [text, i]));
  const displacements = completed.map((text, i) => Math.abs((runPosition.get(text) ?? -N) - i));
  const inPlace = displacements.filter((d) => d === 0).length;
  const label = `one session, ${N} at once`;
  report(
    `${label}: total (ms), queued (MAX_QUEUED=${MAX_QUEUED})`,
    "burst_total_ms",
    Math.round(ms),
  );
  report(`${label}: turns/s`, "burst_turns_per_s", Math.round(N / (ms / 1000)));
  report(`${label}: OK (200 + echo)`, "burst_ok", `${okCount(samples)}/${N}`);
  check(
    `${label}: model calls, each message once`,
    "burst_model_calls",
    modelOrder.length === N && new Set(modelOrder).size === N,
    `${modelOrder.length} calls, ${new Set(modelOrder).size} distinct`,
  );
  check(
    `${label}: most turns running at once`,
    "burst_max_running",
    rig.fake.maxInFlightBySession.get(SESSION) === 1,
    String(rig.fake.maxInFlightBySession.get(SESSION)),
  );
  check(
    `${label}: transcript = user/reply pairs in run order`,
    "burst_transcript",
    pairsInModelOrder,
    `${messages.length} messages, ${pairsInModelOrder ? "in order" : "NOT in order"}`,
  );
  // Seen by the client, so not a check: two replies a millisecond apart can arrive swapped.
  report(
    `${label}: replies received in run order (client-observed) / largest displacement`,
    "burst_received_in_order",
    `${inPlace}/${N} / ${Math.max(...displacements)}`,
  );
}

/** Time to the first content chunk of a streamed reply: baton vs floor vs the model itself. */
async function streaming(rig: Rig): Promise<void> {
  const DELAY_MS = 20, WARM = 5, N = 40;
  rig.fake.script((req) => ({
    kind: "text",
    text: req.lastUserText,
    delayMs: req.body?.stream === true ? DELAY_MS : 0,
  }));
  const by = {
    baton: [] as StreamSample[],
    floor: [] as StreamSample[],
    model: [] as StreamSample[],
  };
  try {
    for (let i = 0; i < WARM + N; i++) {
      for (const via of ["baton", "floor", "model"] as const) {
        const sample = await streamCall(rig, via, `stream ${via} ${i}`);
        if (i >= WARM) by[via].push(sample);
      }
    }
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
  const ttfc = (s: StreamSample[]) => pct(s.map((x) => x.firstChunkMs), 0.5);
  const [baton, floor, model] = [ttfc(by.baton), ttfc(by.floor), ttfc(by.model)];
  report("stream: fake model's delay before its reply (ms)", "stream_model_delay_ms", DELAY_MS);
  report("stream: first content chunk p50, baton (ms)", "stream_ttfc_p50_ms_baton", r2(baton));
  report("stream: first content chunk p50, floor (ms)", "stream_ttfc_p50_ms_floor", r2(floor));
  report(
    "stream: first content chunk p50, model direct (ms)",
    "stream_ttfc_p50_ms_model",
    r2(model),
  );
  report(
    "stream: baton overhead over model direct (ms)",
    "stream_ttfc_overhead_ms",
    r2(baton - model),
  );
  const ratio = r2(baton / model);
  report("stream: ratio baton / model direct", "stream_ttfc_ratio_baton_model", ratio, `${ratio}×`);
  report("stream: whole stream p50, baton (ms)", "stream_total_p50_ms_baton", r2(p50(by.baton)));
  report(
    "stream: OK (200, [DONE], deltas join to the input)",
    "stream_ok",
    `${okCount(by.baton)}/${N} baton, ${okCount(by.floor)}/${N} floor, ${
      okCount(by.model)
    }/${N} model`,
  );
}

/** Per-turn p50 at one transcript size. */
interface TranscriptPoint {
  messages: number;
  p50_ms: number;
  p90_ms: number;
}

/**
 * Fills one session to 10,000 messages (5,000 turns, 50 in flight), measuring sequential turns
 * at each checkpoint; at the last, alternating with sessions of exactly 10 messages.
 */
async function longTranscript(rig: Rig): Promise<TranscriptPoint[]> {
  const CHECKPOINTS = [10, 100, 1_000, 5_000, 10_000], MEASURE = 40, IN_FLIGHT = 50;
  const SESSION = "bench-long", last = CHECKPOINTS[CHECKPOINTS.length - 1];
  const points: TranscriptPoint[] = [];
  const fill: Sample[] = [];
  let messages = 0, fillMs = 0, fillCpu = 0, short: Sample[] = [], long: Sample[] = [];
  for (const checkpoint of CHECKPOINTS) {
    const turns = Math.max(0, (checkpoint - messages) / 2);
    const t0 = performance.now(), cpu0 = await cpuMs(rig.batonPids);
    const done = fill.length;
    fill.push(
      ...await pool(turns, IN_FLIGHT, (i) => batonTurn(rig, SESSION, `fill ${done + i}`)),
    );
    fillMs += performance.now() - t0;
    fillCpu += await cpuMs(rig.batonPids) - cpu0;
    messages += 2 * turns;
    if (checkpoint === last) {
      await pool(
        MEASURE * 5,
        IN_FLIGHT,
        (i) => batonTurn(rig, `bench-short-${i % MEASURE}`, `fill ${i}`),
      );
    }
    const at = messages;
    long = [], short = [];
    for (let i = 0; i < MEASURE; i++) {
      long.push(await batonTurn(rig, SESSION, `long ${at} ${i}`));
      if (checkpoint === last) short.push(await batonTurn(rig, `bench-short-${i}`, `short ${i}`));
    }
    messages += 2 * MEASURE;
    const ms = long.map((s) => s.ms);
    points.push({ messages: at, p50_ms: r2(pct(ms, 0.5)), p90_ms: r2(pct(ms, 0.9)) });
    console.error(`  at ${at} messages: p50 ${r2(pct(ms, 0.5))} ms, p90 ${r2(pct(ms, 0.9))} ms`);
  }
  const after = (await transcript(rig, SESSION)).length;
  report(
    `fill: ${
      fill.length.toLocaleString("en-US")
    } turns queued on one session, ${IN_FLIGHT} in flight (turns/s)`,
    "fill_turns_per_s",
    Math.round(fill.length / (fillMs / 1000)),
  );
  report("fill: workerd CPU per turn (ms)", "fill_cpu_ms_per_turn", r2(fillCpu / fill.length));
  check(
    "fill: OK / transcript messages after",
    "fill_ok",
    after === messages,
    `${okCount(fill)}/${fill.length} / ${after} (expected ${messages})`,
  );
  const [longP50, shortP50] = [p50(long), p50(short)];
  report(
    `turn p50 at ${last.toLocaleString("en-US")} messages (ms)`,
    "turn_p50_10000_msgs_ms",
    r2(longP50),
  );
  report("turn p50 at 10 messages (ms)", "turn_p50_10_msgs_ms", r2(shortP50));
  const ratio = r2(longP50 / shortP50);
  report("p50 ratio 10,000 / 10 messages (alternating)", "p50_ratio_10000_10", ratio, `${ratio}×`);
  report(
    "long / short turns OK",
    "long_short_ok",
    `${okCount(long)}/${MEASURE}, ${okCount(short)}/${MEASURE}`,
  );
  return points;
}

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

/** Runs `fn` as numbered phase `label`, logging its duration. */
async function phase<T>(label: string, fn: () => Promise<T>): Promise<T> {
  console.error(label);
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    console.error(`  (${r1((performance.now() - t0) / 1000)} s)`);
  }
}

const started = performance.now();
const loadBefore = Deno.loadavg();
const fake = await startFakeLlm();
let baton: TestWorker | undefined;
let floor: TestWorker | undefined;
let sessionsSeries: SessionsPoint[] = [];
let transcriptSeries: TranscriptPoint[] = [];
try {
  const main = await startBaton(fake);
  baton = main.worker;
  const batonPids = main.pids;
  floor = await startWorker({
    entry: "scripts/_floor_worker.ts",
    vars: { LLM_BASE_URL: fake.url, LLM_API_KEY: "x" },
  });
  const floorPids = (await workerdPids()).filter((pid) => !batonPids.includes(pid));
  const rig: Rig = { baton, floor, fake, batonPids, floorPids };
  report(
    "baton MAX_QUEUED for this run (default 32; 429 queue_full beyond)",
    "max_queued",
    MAX_QUEUED,
  );

  await phase("1/7 turn overhead (baton vs floor, alternating, sequential)", () => overhead(rig));
  const fan = await phase(
    "2/7 fan-out: 1,000 new sessions at once (fresh workerd)",
    () => onFreshBaton(rig, fanOut),
  );
  const curve = await phase(
    "3/7 sessions curve: 1 to 500 at once (fresh workerd)",
    () => onFreshBaton(rig, sessionsCurve),
  );
  sessionsSeries = [...curve, fan];
  await phase("4/7 one session, 200 messages at once", () => sameSession(rig));
  await phase("5/7 streaming: time to first chunk", () => streaming(rig));
  transcriptSeries = await phase(
    "6/7 long transcript (filling 5,000 turns)",
    () => longTranscript(rig),
  );

  const calls = fake.requests.length - counts.otherModelCalls;
  report("model calls per baton turn", "model_calls_per_turn", r2(calls / counts.batonTurns));
} finally {
  await baton?.dispose();
  await floor?.dispose();
  await fake.close();
}

// Deploy bundle size, after the workers are gone so the build does not disturb the timings.
const size = await phase("7/7 deploy bundle (wrangler deploy --dry-run)", bundleSize);
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
  series: { transcript: transcriptSeries, sessions: sessionsSeries },
};
await Deno.writeTextFile(
  new URL("bench/results.json", root),
  JSON.stringify(results, null, 2) + "\n",
);
await Deno.writeTextFile(
  new URL("bench/turn_time_vs_transcript.svg", root),
  lineChart({
    title: "baton: turn time vs transcript size (one session)",
    xLabel: "messages in the session's transcript (sequential turns)",
    yLabel: "turn time (ms)",
    logX: true,
    series: [{ name: "p50", points: transcriptSeries.map((p) => [p.messages, p.p50_ms]) }],
  }),
);
await Deno.writeTextFile(
  new URL("bench/turn_time_vs_sessions.svg", root),
  lineCharts([
    {
      title: "baton: turn time vs sessions at once (one turn per session)",
      xLabel: "sessions at once",
      yLabel: "request p50 (ms)",
      logX: true,
      series: [
        { name: "new sessions", points: sessionsSeries.map((p) => [p.sessions, p.new_p50_ms]) },
        { name: "warm sessions", points: sessionsSeries.map((p) => [p.sessions, p.warm_p50_ms]) },
      ],
    },
    {
      title: "baton: throughput vs sessions at once",
      xLabel: "sessions at once",
      yLabel: "turns per second",
      logX: true,
      series: [
        {
          name: "new sessions",
          points: sessionsSeries.map((p) => [p.sessions, p.new_turns_per_s]),
        },
        {
          name: "warm sessions",
          points: sessionsSeries.map((p) => [p.sessions, p.warm_turns_per_s]),
        },
      ],
    },
  ]),
);
console.log(
  "wrote bench/results.json, bench/turn_time_vs_transcript.svg, bench/turn_time_vs_sessions.svg",
);
if (failures.length) {
  console.log(
    `WARNING: ${failures.length} checks/requests failed; first: ${failures[0].slice(0, 300)}`,
  );
  Deno.exitCode = 1;
}

// Bench phases on single turns: overhead over the floor Worker, a 200-message burst on one session, streaming, model calls per turn; Deno.
import {
  okCount,
  pct,
  postChat,
  type Sample,
  type StreamSample,
  unpooledClient,
} from "./client.ts";
import { cpuMs } from "./proc.ts";
import { r2, type Report } from "./report.ts";
import { type Baton, MAX_QUEUED, type Rig } from "./rig.ts";

const _p50 = (samples: { ms: number }[]) => pct(samples.map((s) => s.ms), 0.5);

/** workerd CPU ms per unit of work since `since` (a cpuMs reading). */
export async function cpuPer(pids: number[], since: number, n: number): Promise<number> {
  return r2((await cpuMs(pids) - since) / n);
}

/**
 * The object floor's route on the floor Worker: one warm Durable Object that does what a turn
 * must, and nothing else: a durable write (the message), the model call, a durable write (the
 * reply), answering once the last is on disk.
 */
const _OBJECT_FLOOR = "do-write-fetch-write";

/**
 * Turn latency p50/p99 of each baton (the working tree's, and the baseline's when present) vs
 * the floor Worker (the model call alone) and the object floor (`_OBJECT_FLOOR`): 300 sequential
 * turns each, taking turns request by request (the order rotating), so noise on the machine hits
 * all alike.
 */
export async function overhead(rig: Rig, report: Report): Promise<void> {
  const WARM = 30, N = 300;
  type Target = Baton | "floor" | "object";
  const targets: Target[] = [...rig.batons, "floor", "object"];
  const samples = new Map<Target, Sample[]>(targets.map((t) => [t, []]));
  const pidsOf = (t: Baton | "floor") => t === "floor" ? rig.floor.pids : t.worker.pids;
  const cpu0 = new Map<Baton | "floor", number>();
  const objectUrl = new URL(_OBJECT_FLOOR, rig.floor.url).href;
  const json = { "content-type": "application/json" };
  // One call to the object floor, checked as the rig checks its own calls.
  const objectCall = async (text: string): Promise<Sample> => {
    rig.counts.otherModelCalls++;
    const sample = await postChat(objectUrl, json, text);
    if (sample.error) report.fail(`floor /${_OBJECT_FLOOR}: ${sample.error}`);
    return sample;
  };
  for (let i = 0; i < WARM + N; i++) {
    if (i === WARM) {
      for (const t of targets) if (t !== "object") cpu0.set(t, await cpuMs(pidsOf(t)));
    }
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(i + k) % targets.length];
      const sample = t === "object"
        ? await objectCall(`object ${i}`)
        : t === "floor"
        ? await rig.floorCall(`floor ${i}`)
        : await rig.turn(t, `bench-overhead`, `overhead ${i}`);
      if (i >= WARM) samples.get(t)!.push(sample);
    }
  }
  const batonCpu = new Map<Baton, number>();
  const floorMs = samples.get("floor")!.map((s) => s.ms);
  const floorP50 = pct(floorMs, 0.5);
  const objectP50 = _p50(samples.get("object")!);
  for (const baton of rig.batons) {
    const ms = samples.get(baton)!.map((s) => s.ms);
    baton.report.figure("baton turn p50 (ms)", "baton_turn_p50_ms", r2(pct(ms, 0.5)));
    baton.report.figure("baton turn p99 (ms)", "baton_turn_p99_ms", r2(pct(ms, 0.99)));
    if (baton.name === "baton") {
      report.figure("floor call p50 (ms)", "floor_p50_ms", r2(floorP50));
      report.figure("floor call p99 (ms)", "floor_p99_ms", r2(pct(floorMs, 0.99)));
    }
    if (baton.name === "baton") {
      report.figure(
        "object floor p50: a warm object's write, model call, write (ms)",
        "object_floor_p50_ms",
        r2(objectP50),
      );
    }
    baton.report.ratio("p50 ratio baton/floor", "p50_ratio_baton_floor", pct(ms, 0.5) / floorP50);
    baton.report.ratio(
      "p50 ratio baton/object floor (goal ≤ 1.15)",
      "p50_ratio_baton_object_floor",
      pct(ms, 0.5) / objectP50,
    );
    const cpu = await cpuPer(baton.worker.pids, cpu0.get(baton)!, N);
    batonCpu.set(baton, cpu);
    baton.report.figure("baton workerd CPU per turn (ms)", "baton_cpu_ms_per_turn", cpu);
  }
  // The floor Worker serves both floors in one process: its CPU over the alternating run is one
  // relay call and one object-floor call per turn. Each measured again alone, one after the other.
  const floorCpu = await _floorCpu(rig, objectCall, _CPU_PASS);
  report.figure("floor workerd CPU per call (ms)", "floor_cpu_ms_per_call", floorCpu.relay);
  report.figure(
    "object floor workerd CPU per call (ms)",
    "object_floor_cpu_ms_per_call",
    floorCpu.object,
  );
  for (const baton of rig.batons) {
    const cpu = batonCpu.get(baton)!;
    baton.report.ratio(
      "CPU per turn ratio baton/object floor",
      "cpu_ratio_baton_object_floor",
      cpu / floorCpu.object,
    );
  }
  for (const baton of rig.batons) {
    baton.report.figure(
      "overhead requests OK",
      "overhead_ok",
      `${okCount(samples.get(baton)!)}/${N} baton, ${okCount(samples.get("floor")!)}/${N} floor, ` +
        `${okCount(samples.get("object")!)}/${N} object floor`,
    );
  }
  if (rig.batons.length > 1) {
    const [now, then] = rig.batons.map((b) => _p50(samples.get(b)!));
    report.ratio(
      "turn p50 ratio current / baseline (alternating)",
      "p50_ratio_current_baseline",
      now / then,
    );
  }
}

/** Calls per floor in `_floorCpu`'s passes. */
const _CPU_PASS = 100;

/**
 * The floor Worker's CPU per relay call and per object-floor call, each from a pass of `n` calls
 * of that kind alone (the process serves both: read over the alternating run, its CPU was one of
 * each per turn).
 */
async function _floorCpu(
  rig: Rig,
  objectCall: (text: string) => Promise<Sample>,
  n: number,
): Promise<{ relay: number; object: number }> {
  // Both calls check their own answers (the rig's, and `objectCall`).
  const pass = async (call: (i: number) => Promise<Sample>): Promise<number> => {
    const since = await cpuMs(rig.floor.pids);
    for (let i = 0; i < n; i++) await call(i);
    return await cpuPer(rig.floor.pids, since, n);
  };
  const relay = await pass((i) => rig.floorCall(`floor cpu ${i}`));
  const object = await pass((i) => objectCall(`object cpu ${i}`));
  return { relay, object };
}

/** 200 messages at once to one session: each must run once, one at a time, in queue order. */
export async function sameSession(rig: Rig, report: Report): Promise<void> {
  const N = 200, SESSION = "bench-burst";
  const texts = Array.from({ length: N }, (_, i) => `[tag:${SESSION}] burst ${i}`);
  const completed: string[] = [];
  const t0 = performance.now();
  const samples = await Promise.all(texts.map(async (text) => {
    const sample = await rig.turn(rig.baton, SESSION, text, unpooledClient());
    completed.push(text);
    return sample;
  }));
  const ms = performance.now() - t0;
  const modelOrder = rig.fake.requests.filter((r) => r.sessionTag === SESSION)
    .map((r) => r.lastUserText);
  const messages = await rig.transcript(rig.baton, SESSION);
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
  report.figure(
    `${label}: total (ms), queued (MAX_QUEUED=${MAX_QUEUED})`,
    "burst_total_ms",
    Math.round(ms),
  );
  report.figure(`${label}: turns/s`, "burst_turns_per_s", Math.round(N / (ms / 1000)));
  report.figure(`${label}: OK (200 + echo)`, "burst_ok", `${okCount(samples)}/${N}`);
  report.check(
    `${label}: model calls, each message once`,
    "burst_model_calls",
    modelOrder.length === N && new Set(modelOrder).size === N,
    `${modelOrder.length} calls, ${new Set(modelOrder).size} distinct`,
  );
  report.check(
    `${label}: most turns running at once`,
    "burst_max_running",
    rig.fake.maxInFlightBySession.get(SESSION) === 1,
    String(rig.fake.maxInFlightBySession.get(SESSION)),
  );
  report.check(
    `${label}: transcript = user/reply pairs in run order`,
    "burst_transcript",
    pairsInModelOrder,
    `${messages.length} messages, ${pairsInModelOrder ? "in order" : "NOT in order"}`,
  );
  // Seen by the client, so not a check: two replies a millisecond apart can arrive swapped.
  report.figure(
    `${label}: replies received in run order (client-observed) / largest displacement`,
    "burst_received_in_order",
    `${inPlace}/${N} / ${Math.max(...displacements)}`,
  );
}

/**
 * Time to the first content chunk of a streamed reply, through each baton (the working tree's,
 * and the baseline's when present), the floor Worker (the model's SSE relayed), the object floor
 * (the floor Worker's warm object: a claim written before the model call, the stream relayed as
 * NDJSON over RPC and turned into SSE by the Worker, a write at the end) and the model direct:
 * N streams each, taking turns request by request (the order rotating).
 */
export async function streaming(rig: Rig, report: Report): Promise<void> {
  const DELAY_MS = 20, WARM = 5, N = 40;
  type Target = Baton | "floor" | "object" | "model";
  const targets: Target[] = [...rig.batons, "floor", "object", "model"];
  const by = new Map<Target, StreamSample[]>(targets.map((t) => [t, []]));
  rig.fake.script((req) => ({
    kind: "text",
    text: req.lastUserText,
    delayMs: req.body?.stream === true ? DELAY_MS : 0,
  }));
  try {
    for (let i = 0; i < WARM + N; i++) {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(i + k) % targets.length];
        const name = typeof t === "string" ? t : t.name;
        const sample = await rig.stream(t, `stream ${name} ${i}`);
        if (i >= WARM) by.get(t)!.push(sample);
      }
    }
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
  const ttfc = (t: Target) => pct(by.get(t)!.map((x) => x.firstChunkMs), 0.5);
  const [floor, object, model] = [ttfc("floor"), ttfc("object"), ttfc("model")];
  report.figure(
    "stream: fake model's delay before its reply (ms)",
    "stream_model_delay_ms",
    DELAY_MS,
  );
  for (const baton of rig.batons) {
    const ttfcBaton = ttfc(baton);
    baton.report.figure(
      "stream: first content chunk p50, baton (ms)",
      "stream_ttfc_p50_ms_baton",
      r2(ttfcBaton),
    );
    if (baton.name === "baton") {
      report.figure(
        "stream: first content chunk p50, floor (ms)",
        "stream_ttfc_p50_ms_floor",
        r2(floor),
      );
      report.figure(
        "stream: first content chunk p50, model direct (ms)",
        "stream_ttfc_p50_ms_model",
        r2(model),
      );
      report.figure(
        "stream: first content chunk p50, object floor: claim, model stream over RPC, write (ms)",
        "stream_ttfc_p50_ms_object_floor",
        r2(object),
      );
      report.ratio(
        "stream: ratio floor / model direct",
        "stream_ttfc_ratio_floor_model",
        floor / model,
      );
      report.ratio(
        "stream: ratio object floor / model direct",
        "stream_ttfc_ratio_object_floor_model",
        object / model,
      );
    }
    baton.report.figure(
      "stream: baton overhead over model direct (ms)",
      "stream_ttfc_overhead_ms",
      r2(ttfcBaton - model),
    );
    baton.report.ratio(
      "stream: ratio baton / model direct",
      "stream_ttfc_ratio_baton_model",
      ttfcBaton / model,
    );
    baton.report.ratio(
      "stream: ratio baton / object floor",
      "stream_ttfc_ratio_baton_object_floor",
      ttfcBaton / object,
    );
    baton.report.figure(
      "stream: whole stream p50, baton (ms)",
      "stream_total_p50_ms_baton",
      r2(_p50(by.get(baton)!)),
    );
  }
  if (rig.batons.length > 1) {
    const [now, then] = rig.batons.map(ttfc);
    report.ratio(
      "stream: first chunk p50 ratio current / baseline (alternating)",
      "stream_ttfc_ratio_current_baseline",
      now / then,
    );
  }
  const ok = (t: Target) => `${okCount(by.get(t)!)}/${N}`;
  report.figure(
    "stream: OK (200, [DONE], deltas join to the input)",
    "stream_ok",
    `${rig.batons.map((b) => `${ok(b)} ${b.name}`).join(", ")}, ${ok("floor")} floor, ` +
      `${ok("object")} object floor, ${ok("model")} model`,
  );
}

/** Model calls per baton turn over the whole run (floor, peer and direct calls left out): 1. */
export function modelCallsPerTurn(rig: Rig, report: Report): Promise<void> {
  const calls = rig.fake.requests.length - rig.counts.otherModelCalls;
  report.figure(
    "model calls per baton turn",
    "model_calls_per_turn",
    r2(calls / rig.counts.batonTurns),
  );
  return Promise.resolve();
}

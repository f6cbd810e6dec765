// Bench phase on workerd itself, no baton code: a new vs a warm Durable Object, a durable write before a model call, and a new chat's object vs a warm one's, on the floor Worker's empty SQLite object; Deno.
import { okCount, pct, postChat, type Sample } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Rig } from "./rig.ts";
import {
  alternateChats,
  chatMs,
  checkAnswered,
  floorTarget,
  newWarmRatio,
} from "./phases_telegram.ts";

/** New objects at once: half the fan-out's 1,000, enough to be throughput-bound, a second or so. */
const OBJECTS = 500;

/**
 * The costs that bound baton's figures, measured on the floor Worker's empty SQLite Durable
 * Object: what a new object costs over a warm one, what a durable write costs on the way to
 * the model, and what a new chat's first message costs over a warm chat's.
 */
export async function runtimeFloor(rig: Rig, report: Report): Promise<void> {
  await _objects(rig, report);
  await _writes(rig, report);
  await _firstWrites(rig, report);
}

/**
 * A new object's first durable write then a model call vs a warm object's: Telegram updates to
 * the floor Worker's chat route (its chat's object stores the message, the webhook is acked, the
 * object calls the model, stores the reply and sends it), a new chat every other update as the
 * telegram phase sends them to baton. Nothing in baton's design lets a first message skip this:
 * its new / warm ratio is the floor of baton's.
 */
async function _firstWrites(rig: Rig, report: Report): Promise<void> {
  const floor = floorTarget(rig, report, 8_100_000);
  await alternateChats([floor], { warmUp: 5, fresh: 100, warm: 200 });
  for (const field of ["ack", "reply"] as const) {
    const what = field === "ack" ? "ack" : "webhook → reply";
    report.joined(`runtime floor: a chat's ${what} p50, new object / warm object (ms)`, {
      [`floor_chat_new_${field}_p50_ms`]: r2(chatMs(floor.samples.new, field, 0.5)),
      [`floor_chat_warm_${field}_p50_ms`]: r2(chatMs(floor.samples.warm, field, 0.5)),
    });
    report.ratio(
      `runtime floor: a chat's ${field} p50 ratio new object / warm object`,
      `floor_chat_${field}_p50_ratio_new_warm`,
      newWarmRatio(floor, field),
    );
  }
  checkAnswered(rig, floor, "floor_chat_ok");
}

/** One `GET /empty/<name>` (a `SELECT 1` in object `<name>`); failures go to the report. */
async function _ping(rig: Rig, report: Report, name: string): Promise<Sample> {
  const t0 = performance.now();
  try {
    const res = await rig.floor.fetch(`/empty/${encodeURIComponent(name)}`);
    const body = await res.text();
    const ms = performance.now() - t0;
    if (res.status === 200 && body === "ok") return { ms, ok: true };
    report.fail(`floor /empty/${name}: ${res.status} ${body.slice(0, 200)}`);
    return { ms, ok: false };
  } catch (e) {
    report.fail(`floor /empty/${name}: fetch failed: ${e}`);
    return { ms: performance.now() - t0, ok: false };
  }
}

/** All of `names` at once (no pool, as the fan-out does for baton); objects per second. */
async function _allAtOnce(
  rig: Rig,
  report: Report,
  names: string[],
): Promise<{ perS: number; ok: number }> {
  const t0 = performance.now();
  const samples = await Promise.all(names.map((name) => _ping(rig, report, name)));
  return {
    perS: Math.round(names.length / ((performance.now() - t0) / 1000)),
    ok: okCount(samples),
  };
}

/**
 * 500 new objects at once, then the same 500 again (warm, still in memory): the runtime's own
 * price of a new object (its SQLite file and instance), next to baton's fan-out / warm ratio.
 */
async function _objects(rig: Rig, report: Report): Promise<void> {
  // Loads the class and warms the routes, so the new round pays for objects only.
  await _ping(rig, report, "floor-empty-warm-up");
  const names = Array.from({ length: OBJECTS }, (_, i) => `floor-empty-${i}`);
  const fresh = await _allAtOnce(rig, report, names);
  const warm = await _allAtOnce(rig, report, names);
  report.figure(
    `runtime floor: new empty objects/s (${OBJECTS} at once, SELECT 1 each)`,
    "floor_new_objects_per_s",
    fresh.perS,
  );
  report.figure(
    `runtime floor: warm empty objects/s (the same ${OBJECTS} again)`,
    "floor_warm_objects_per_s",
    warm.perS,
  );
  report.ratio(
    "runtime floor: new / warm objects/s",
    "floor_new_warm_ratio",
    fresh.perS / warm.perS,
  );
  report.figure(
    "runtime floor: objects OK",
    "floor_objects_ok",
    `${fresh.ok}/${OBJECTS} new, ${warm.ok}/${OBJECTS} warm`,
  );
}

/** The object's steps per route: (b) − (a) is one commit on the path, (c) − (d) two. */
const _ROUTES = {
  a: "do-fetch",
  b: "do-write-fetch",
  c: "do-write-fetch-write-fetch",
  d: "do-fetch-fetch",
} as const;

/**
 * Chat completions through one warm object that calls the model with and without an INSERT
 * before each call: 300 sequential requests per route, taking turns request by request (the
 * order rotating, as `overhead` does), so noise on the machine hits all alike. workerd's output
 * gate holds the outgoing fetch until the write before it is durable, which is the price of
 * baton's promise (a commit before the model call, one before the reply).
 */
async function _writes(rig: Rig, report: Report): Promise<void> {
  const WARM = 30, N = 300;
  const keys = Object.keys(_ROUTES) as (keyof typeof _ROUTES)[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as Sample[]])) as Record<
    keyof typeof _ROUTES,
    Sample[]
  >;
  const headers = { "content-type": "application/json" };
  for (let i = 0; i < WARM + N; i++) {
    for (let j = 0; j < keys.length; j++) {
      const key = keys[(i + j) % keys.length], route = _ROUTES[key];
      rig.counts.otherModelCalls += route.split("fetch").length - 1;
      const sample = await postChat(new URL(route, rig.floor.url).href, headers, `${route} ${i}`);
      if (sample.error) report.fail(`floor /${route}: ${sample.error}`);
      if (i >= WARM) samples[key].push(sample);
    }
  }
  const p50 = Object.fromEntries(
    keys.map((k) => [k, pct(samples[k].map((s) => s.ms), 0.5)]),
  ) as Record<keyof typeof _ROUTES, number>;
  report.joined(
    "runtime floor: object → model p50: fetch / write, fetch / write, fetch, write, fetch / " +
      "fetch, fetch (ms)",
    {
      floor_do_fetch_p50_ms: r2(p50.a),
      floor_do_write_fetch_p50_ms: r2(p50.b),
      floor_do_write_fetch_write_fetch_p50_ms: r2(p50.c),
      floor_do_fetch_fetch_p50_ms: r2(p50.d),
    },
  );
  report.figure(
    "runtime floor: a durable write before the model call, p50 (ms)",
    "floor_commit_before_fetch_ms",
    r2(p50.b - p50.a),
  );
  report.figure(
    "runtime floor: two durable writes, each before a model call, p50 (ms)",
    "floor_two_commits_ms",
    r2(p50.c - p50.d),
  );
  report.figure(
    "runtime floor: object → model requests OK",
    "floor_do_ok",
    keys.map((k) => `${okCount(samples[k])}/${N}`).join(", "),
  );
}

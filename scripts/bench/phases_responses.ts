// Bench phase "responses continuation": the Worker's calls to the session objects, and the time, of a previous_response_id turn; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import { API_KEY, type Baton, type Rig } from "./rig.ts";
import { countingBuild } from "./rpc_counter.ts";

/**
 * On each baton build (a fresh copy that counts the Worker's session-object calls), side by side:
 * a conversation of `SETUP` Responses turns of about 2 KB each, then `N` more, each continuing the
 * one before by `previous_response_id` — the common case, the conversation simply goes on. The
 * builds take turns request by request (the order rotating), so noise on the machine hits all
 * alike (one build after the other, the ratio swung 0.86–1.46× run to run). Records the
 * session-object calls per continuation and its p50 time, and with a baseline the ratio of the
 * two builds' p50s.
 */
export async function responsesContinuation(rig: Rig, report: Report): Promise<void> {
  const SETUP = 10, N = 40;
  const counted: Baton[] = [];
  for (const baton of rig.batons) {
    counted.push({ ...baton, scriptPath: await countingBuild(baton.scriptPath) });
  }
  const fresh: Baton[] = [];
  const measure = async (): Promise<number[]> => {
    const previous = fresh.map((): string | null => null);
    for (let i = 0; i < SETUP; i++) {
      for (const [b, baton] of fresh.entries()) {
        previous[b] = (await _respond(rig, baton, previous[b], i)).id;
      }
    }
    for (const baton of fresh) await _rpcs(baton);
    const ms = fresh.map((): number[] => []);
    for (let i = 0; i < N; i++) {
      for (let k = 0; k < fresh.length; k++) {
        const b = (i + k) % fresh.length;
        const t0 = performance.now();
        const { id, ok } = await _respond(rig, fresh[b], previous[b], SETUP + i);
        ms[b].push(performance.now() - t0);
        if (!ok) report.fail(`${rig.batons[b].name}: continuation ${i} failed`);
        previous[b] = id;
      }
    }
    const p50s: number[] = [];
    for (const [b, baton] of rig.batons.entries()) {
      const p50 = pct(ms[b], 0.5);
      p50s.push(p50);
      baton.report.figure(
        "responses continuation: session-object calls per turn",
        "responses_continuation_rpcs",
        r2((await _rpcs(fresh[b])) / N),
      );
      baton.report.figure(
        "responses continuation p50 (ms)",
        "responses_continuation_p50_ms",
        r2(p50),
      );
    }
    return p50s;
  };
  // Nested onFresh: every build gets its own fresh workerd, all stopped (and cleaned) after.
  const onAllFresh = (i: number): Promise<number[]> =>
    i === counted.length
      ? measure()
      : rig.onFresh(counted[i], (b) => (fresh.push(b), onAllFresh(i + 1)));
  const p50s = await onAllFresh(0);
  if (p50s.length > 1) {
    report.ratio(
      "responses continuation p50 ratio baton/baseline",
      "responses_continuation_p50_ratio_baseline",
      p50s[0] / p50s[1],
    );
  }
}

/** One Responses turn of about 2 KB input, continuing `previous` when given. */
async function _respond(
  rig: Rig,
  baton: Baton,
  previous: string | null,
  i: number,
): Promise<{ id: string | null; ok: boolean }> {
  const input = `turn ${i} ${"lorem ipsum ".repeat(170)}`;
  rig.counts.batonTurns++; // one model call each, for the model-calls-per-turn check
  const res = await baton.worker.fetch("/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input, previous_response_id: previous }),
  });
  const body = await res.json() as { id?: string };
  return { id: body.id ?? null, ok: res.ok && typeof body.id === "string" };
}

/** The Worker's session-object calls since the last reading (and resets the count). */
async function _rpcs(baton: Baton): Promise<number> {
  const res = await baton.worker.fetch("/__bench/rpcs");
  return ((await res.json()) as { rpcs: number }).rpcs;
}

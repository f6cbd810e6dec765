// Bench phase "responses continuation": the Worker's calls to the session objects, and the time, of a previous_response_id turn; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import { API_KEY, type Baton, type Rig } from "./rig.ts";
import { countingBuild } from "./rpc_counter.ts";

/**
 * On each baton build (a fresh copy that counts the Worker's session-object calls): a
 * conversation of `SETUP` Responses turns of about 2 KB each, then `N` more, each continuing the
 * one before by `previous_response_id` — the common case, the conversation simply goes on.
 * Records the session-object calls per continuation and its p50 time, and with a baseline the
 * ratio of the two builds' p50s.
 */
export async function responsesContinuation(rig: Rig, report: Report): Promise<void> {
  const SETUP = 10, N = 40;
  const p50s: number[] = [];
  for (const baton of rig.batons) {
    const counted = { ...baton, scriptPath: await countingBuild(baton.scriptPath) };
    await rig.onFresh(counted, async (fresh) => {
      let previous: string | null = null;
      for (let i = 0; i < SETUP; i++) previous = (await _respond(rig, fresh, previous, i)).id;
      await _rpcs(fresh);
      const ms: number[] = [];
      for (let i = 0; i < N; i++) {
        const t0 = performance.now();
        const { id, ok } = await _respond(rig, fresh, previous, SETUP + i);
        ms.push(performance.now() - t0);
        if (!ok) report.fail(`${baton.name}: continuation ${i} failed`);
        previous = id;
      }
      const perTurn = (await _rpcs(fresh)) / N;
      const p50 = pct(ms, 0.5);
      p50s.push(p50);
      baton.report.figure(
        "responses continuation: session-object calls per turn",
        "responses_continuation_rpcs",
        r2(perTurn),
      );
      baton.report.figure(
        "responses continuation p50 (ms)",
        "responses_continuation_p50_ms",
        r2(p50),
      );
    });
  }
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

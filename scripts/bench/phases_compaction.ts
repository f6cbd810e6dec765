// Bench phase "long transcript, compaction on": turn p50 at 10,000 messages with CONTEXT_TOKENS small enough to compact vs 10-message sessions, and what one compaction costs; Deno.
import { okCount, pct, pool, type Sample } from "./client.ts";
import { cpuMs } from "./proc.ts";
import { r2, type Report } from "./report.ts";
import type { Baton, Rig } from "./rig.ts";
import type { FakeModelRequest } from "../../lib/testing/fake_model.ts";

/** The lowest `CONTEXT_TOKENS` allows: a conversation of padded messages passes it in ~40 messages. */
const _CONTEXT_TOKENS = 1_000;
/** Characters of each message: 40 of them (HISTORY_WINDOW) are ~2,000 tokens. */
const _PAD = "x".repeat(180);
/** How the summary request starts (lib/session/compactor.ts `SUMMARY_PROMPT`). */
const _SUMMARY_START = "You compact a conversation";

/** Whether `req` is a compaction's summary call rather than a turn's. */
const _isSummary = (req: FakeModelRequest) =>
  String(req.body?.messages?.[0]?.content ?? "").startsWith(_SUMMARY_START);

/**
 * On a fresh baton with `CONTEXT_TOKENS=1000`, fills one session to 10,000 messages (5,000 turns,
 * 50 in flight) of ~190 characters, the fake model counting prompt tokens as a quarter of the
 * characters it is sent (as a real model's count would go) and writing a short summary when asked:
 * the session compacts every few turns, as a long chat does against its context. Then sequential
 * turns on it alternate with turns on 10-message sessions (never compacted); the long session's
 * turns that compacted (a summary call before theirs) against those that did not give the cost of
 * one compaction, in time and workerd CPU (CPU read around each turn: 10 ms ticks, averaged).
 */
export async function compactedTranscript(rig: Rig, report: Report): Promise<void> {
  const MESSAGES = 10_000, MEASURE = 120, IN_FLIGHT = 50, SHORT = 40;
  const SESSION = "bench-compacted";
  rig.fake.script((req) =>
    _isSummary(req)
      ? { kind: "text", text: `summary of ${req.lastUserText.split("\n").length} lines` }
      : {
        kind: "text",
        text: req.lastUserText,
        usage: {
          prompt_tokens: Math.ceil(JSON.stringify(req.body?.messages ?? []).length / 4),
          completion_tokens: Math.ceil(req.lastUserText.length / 4),
        },
      }
  );
  try {
    await rig.onFresh(rig.baton, async (baton) => {
      const first = rig.fake.requests.length;
      const t0 = performance.now();
      const fill = await pool(
        MESSAGES / 2,
        IN_FLIGHT,
        (i) => rig.turn(baton, SESSION, `fill ${i} ${_PAD}`),
      );
      const fillMs = performance.now() - t0;
      const fillSummaries = rig.fake.requests.slice(first).filter(_isSummary).length;
      // 10-message sessions: five turns each, under the limit.
      await pool(
        SHORT * 5,
        IN_FLIGHT,
        (i) => rig.turn(baton, `bench-compacted-short-${i % SHORT}`, `fill ${i} ${_PAD}`),
      );
      const m = await _measure(rig, baton, SESSION, SHORT, MEASURE);
      const after = (await rig.transcript(baton, SESSION)).length;
      const expected = MESSAGES + 2 * MEASURE;
      _record(report, { fill, fillMs, fillSummaries, after, expected, ...m });
    }, { CONTEXT_TOKENS: String(_CONTEXT_TOKENS) });
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
}

/** One measured turn: its sample, its workerd CPU, whether it compacted first. */
interface _Turn {
  sample: Sample;
  cpu: number;
  compacted: boolean;
}

/** Sequential turns, long session then a short one, each with its CPU and compaction. */
async function _measure(rig: Rig, baton: Baton, session: string, shorts: number, n: number) {
  const pids = baton.worker.pids;
  const long: _Turn[] = [], short: _Turn[] = [];
  const one = async (on: string, text: string): Promise<_Turn> => {
    const before = rig.fake.requests.length, cpu0 = await cpuMs(pids);
    const sample = await rig.turn(baton, on, text);
    const cpu = await cpuMs(pids) - cpu0;
    const compacted = rig.fake.requests.slice(before).some(_isSummary);
    return { sample, cpu, compacted };
  };
  for (let i = 0; i < n; i++) {
    long.push(await one(session, `long ${i} ${_PAD}`));
    short.push(await one(`bench-compacted-short-${i % shorts}`, `short ${i} ${_PAD}`));
  }
  return { long, short };
}

function _record(report: Report, m: {
  fill: Sample[];
  fillMs: number;
  fillSummaries: number;
  after: number;
  expected: number;
  long: _Turn[];
  short: _Turn[];
}): void {
  const p50 = (turns: _Turn[]) => pct(turns.map((t) => t.sample.ms), 0.5);
  const cpu = (turns: _Turn[]) => turns.reduce((sum, t) => sum + t.cpu, 0) / turns.length;
  const compacting = m.long.filter((t) => t.compacted);
  const plain = m.long.filter((t) => !t.compacted);
  report.figure(
    `compaction on (CONTEXT_TOKENS=${_CONTEXT_TOKENS}): fill 5,000 turns, 50 in flight (turns/s)`,
    "compacted_fill_turns_per_s",
    Math.round(m.fill.length / (m.fillMs / 1000)),
  );
  report.figure(
    "compaction on: compactions while filling to 10,000 messages",
    "compacted_fill_compactions",
    m.fillSummaries,
  );
  report.check(
    "compaction on: fill OK / transcript messages after (none lost)",
    "compacted_fill_ok",
    okCount(m.fill) === m.fill.length && m.after === m.expected,
    `${okCount(m.fill)}/${m.fill.length} / ${m.after} (expected ${m.expected})`,
  );
  report.joined("compaction on: turn p50 at 10,000 messages / at 10 messages (ms)", {
    compacted_turn_p50_10000_msgs_ms: r2(p50(m.long)),
    compacted_turn_p50_10_msgs_ms: r2(p50(m.short)),
  });
  report.ratio(
    "compaction on: p50 ratio 10,000 / 10 messages (alternating)",
    "compacted_p50_ratio_10000_10",
    p50(m.long) / p50(m.short),
  );
  report.figure(
    "compaction on: measured turns at 10,000 that compacted first",
    "compacted_turns_compacting",
    `${compacting.length}/${m.long.length}`,
  );
  if (compacting.length && plain.length) {
    report.joined("compaction on: turn p50 that compacts / that does not (ms)", {
      compacting_turn_p50_ms: r2(p50(compacting)),
      plain_long_turn_p50_ms: r2(p50(plain)),
    });
    report.figure(
      "compaction on: one compaction, p50 time (ms; a summary call included)",
      "compaction_cost_ms",
      r2(p50(compacting) - p50(plain)),
    );
    report.joined(
      "compaction on: workerd CPU per turn that compacts / that does not / at 10 messages (ms)",
      {
        compacting_turn_cpu_ms: r2(cpu(compacting)),
        plain_long_turn_cpu_ms: r2(cpu(plain)),
        short_turn_cpu_ms: r2(cpu(m.short)),
      },
    );
  }
  report.figure(
    "compaction on: long / short turns OK",
    "compacted_long_short_ok",
    `${okCount(m.long.map((t) => t.sample))}/${m.long.length}, ` +
      `${okCount(m.short.map((t) => t.sample))}/${m.short.length}`,
  );
}

// What a chaos run observed (the verifier's input) and the per-way counters it fills; Deno.
import type { FakeRequest } from "../test/_support/fake_llm.ts";
import type { FakeEvent, FaultCounts } from "./_chaos_fake_server.ts";
import type { ShownPost } from "./_chaos_fakes.ts";
import type { ChaosMessage, ChaosSession, ChaosWay, PlatformWay } from "./_chaos_plan.ts";
import type { ChaosJob } from "./_chaos_jobs.ts";
import type { ChaosFlood } from "./_chaos_floods.ts";
import type { ChaosReplay } from "./_chaos_replays.ts";
import type { ChaosFigure, ChaosRow } from "./_chaos_report.ts";
import type { KillRecord } from "./_chaos_runtime.ts";

/** A run event as a subscriber read it. */
export interface ReadEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Deliveries one way sent and how bad ones were answered. */
export interface WayCounts {
  sent: number;
  duplicatesSent: number;
  badSent: number;
  bad5xx: number;
  good5xx: number;
}

/** Everything a chaos run saw from outside, for `verifyChaos`. */
export interface ChaosObservation {
  seed: number;
  ways: ChaosWay[];
  sessions: ChaosSession[];
  /** The fake model's calls, and per call whether it answered (else 429, 500 or a stall). */
  modelRequests: FakeRequest[];
  modelAnswered: boolean[];
  injectedModel: { r429: number; r500: number; stall: number };
  shown: ShownPost[];
  faults: Record<PlatformWay, FaultCounts>;
  lookups: Record<PlatformWay, number>;
  /** Every request each fake platform got and its fate (for observation.json). */
  fakeEvents: Record<string, FakeEvent[]>;
  transcripts: Map<string, { role: string; content: string }[]>;
  locked: Set<string>;
  /** Runs: a subscriber's read of the whole stream after the run, and GET /v1/runs/{id}. */
  late: Map<ChaosMessage, { events: ReadEvent[]; status?: string; output?: string }>;
  counts: Record<ChaosWay, WayCounts>;
  /** Jobs the runs sessions scheduled, with what was found of them after the run. */
  jobs: ChaosJob[];
  /** The flood tenant's calls past its quota and the turns the model saw of them (none: no flood). */
  flood?: ChaosFlood;
  /** Platform deliveries sent again under fresh delivery ids (none: no replays). */
  replays?: ChaosReplay[];
  kills: KillRecord[];
  openAtKills: number;
  /** What each deliberately held send was. */
  held: string[];
  problems: string[];
  seconds: number;
}

/** Per-way counters keyed by row label, in first-use order, plus capped problem lines. */
export class Tally {
  readonly #rows = new Map<string, ChaosRow>();
  readonly #ways: readonly ChaosWay[];
  readonly problems: string[];
  readonly #perLabel = new Map<string, number>();

  constructor(ways: readonly ChaosWay[], problems: string[]) {
    this.#ways = ways;
    this.problems = problems;
  }

  /** Declares a row (so it shows, zero, even when nothing is added); `only` limits its ways. */
  row(label: string, mustBeZero = false, only?: readonly ChaosWay[]): void {
    if (this.#rows.has(label)) return;
    const byWay: Partial<Record<ChaosWay, number>> = {};
    for (const way of only ?? this.#ways) if (this.#ways.includes(way)) byWay[way] = 0;
    this.#rows.set(label, { label, mustBeZero, byWay });
  }

  /** Adds `n` to `label` on `way`; with `problem`, logs it (at most 8 lines per label). */
  add(label: string, way: ChaosWay, n = 1, problem?: string): void {
    this.row(label);
    const row = this.#rows.get(label)!;
    row.byWay[way] = (row.byWay[way] ?? 0) + n;
    if (problem) {
      const seen = this.#perLabel.get(label) ?? 0;
      this.#perLabel.set(label, seen + 1);
      if (seen < 8) this.problems.push(`${label}: ${problem}`);
    }
  }

  rows(): ChaosRow[] {
    return [...this.#rows.values()];
  }
}

/** A figure row for the run table. */
export function fig(label: string, value: number | string, mustBeZero = false): ChaosFigure {
  return { label, value, mustBeZero };
}

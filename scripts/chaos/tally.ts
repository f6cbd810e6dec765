// The per-way counters a chaos verdict fills, and its figure rows; Deno.
import type { ChaosWay } from "./plan.ts";
import type { ChaosFigure, ChaosRow } from "./report.ts";

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

// The chaos run's verdict as tables: figures per way in, the run's own figures, one summary row per seed; Deno.
import { CHAOS_WAYS, type ChaosWay } from "./plan.ts";

/** One figure with a value per way in (null: does not apply to that way). */
export interface ChaosRow {
  label: string;
  /** Must be zero on every way for the run to pass. */
  mustBeZero: boolean;
  byWay: Partial<Record<ChaosWay, number>>;
}

/** One figure of the whole run. */
export interface ChaosFigure {
  label: string;
  value: number | string;
  mustBeZero?: boolean;
}

/** What a chaos run measured; `ok` when every must-be-zero figure is zero. */
export interface ChaosReport {
  ok: boolean;
  seed: number;
  /** The ways driven, in column order. */
  ways: ChaosWay[];
  rows: ChaosRow[];
  /** The run's own figures (kills, faults injected, parts in doubt per kill …). */
  figures: ChaosFigure[];
  /** Examples of what went wrong, for the log. */
  problems: string[];
  seconds: number;
}

/** A row's total over the ways. */
export function rowTotal(row: ChaosRow): number {
  return Object.values(row.byWay).reduce((n, v) => n + (v ?? 0), 0);
}

/** The total of the row labelled `label` (0 when absent): for tests and the summary. */
export function figure(report: ChaosReport, label: string): number {
  const row = report.rows.find((r) => r.label === label);
  if (row) return rowTotal(row);
  const value = report.figures.find((f) => f.label === label)?.value;
  return typeof value === "number" ? value : 0;
}

/** Row labels the summary and the tests read. */
export const LABELS = {
  messages: "messages",
  accepted: "accepted messages",
  answered: "answered (whole reply, final answer or final event)",
  failures: "of which failure notices (turn failed)",
  inDoubt: "parts in doubt after a kill (as the platforms saw them resolved)",
  inDoubt5xx: "parts in doubt after a 5xx answer",
  marked: "resends with the note (marked)",
  markedDuplicates: "of which repeated a part already shown",
  lost: "lost",
  unmarked: "unmarked duplicates",
  twice: "turns run twice",
  order: "out of order within a session",
  mixed: "mixed sessions",
  locked: "sessions left locked",
  bad5xx: "5xx answers to bad input",
  badTurns: "turns started by bad input",
  events: "run events missing or repeated",
  badRefusal: "bad signatures or tokens not answered 401",
  duplicates: "duplicate deliveries",
  bad: "malformed or badly signed deliveries",
  kills: "runtime kills (SIGKILL of the process group)",
  openAtKills: "messages waiting, in a turn or unanswered at the kills",
} as const;

const _fmt = (v: number | string | undefined) =>
  v === undefined ? "–" : typeof v === "number" ? v.toLocaleString("en-US") : v;

/** The per-way figures as a markdown table, then the run's own figures. */
export function formatChaosReport(report: ChaosReport): string {
  const ways = report.ways.length ? report.ways : [...CHAOS_WAYS];
  const head = `| figure | ${ways.join(" | ")} | total |`;
  const rule = `|---|${ways.map(() => "---:").join("|")}|---:|`;
  const rows = report.rows.map((r) =>
    `| ${r.label}${r.mustBeZero ? " (must be 0)" : ""} | ${
      ways.map((w) => _fmt(r.byWay[w])).join(" | ")
    } | ${_fmt(rowTotal(r))} |`
  );
  const figures = report.figures.map((f) =>
    `| ${f.label}${f.mustBeZero ? " (must be 0)" : ""} | ${_fmt(f.value)} |`
  );
  return [
    head,
    rule,
    ...rows,
    "",
    "| run | value |",
    "|---|---:|",
    ...figures,
  ].join("\n");
}

/** One line per seed (pass or fail and the figures that decide it), then the totals. */
export function formatChaosSummary(reports: ChaosReport[]): string {
  const columns: [string, string][] = [
    ["messages", LABELS.messages],
    ["kills", LABELS.kills],
    ["in doubt (kills)", LABELS.inDoubt],
    ["in doubt (5xx)", LABELS.inDoubt5xx],
    ["marked resends", LABELS.marked],
    ["lost", LABELS.lost],
    ["unmarked dup.", LABELS.unmarked],
    ["twice", LABELS.twice],
    ["order", LABELS.order],
    ["mixed", LABELS.mixed],
    ["locked", LABELS.locked],
    ["bad 5xx", LABELS.bad5xx],
    ["bad turns", LABELS.badTurns],
    ["events", LABELS.events],
  ];
  const lines = [
    `| seed | result | ${columns.map((c) => c[0]).join(" | ")} | s |`,
    `|---|---|${columns.map(() => "---:").join("|")}|---:|`,
    ...reports.map((r) =>
      `| ${r.seed} | ${r.ok ? "pass" : "FAIL"} | ${
        columns.map((c) => _fmt(figure(r, c[1]))).join(" | ")
      } | ${r.seconds.toFixed(0)} |`
    ),
  ];
  const passed = reports.filter((r) => r.ok).length;
  const total = (label: string) => reports.reduce((n, r) => n + figure(r, label), 0);
  const seconds = reports.reduce((n, r) => n + r.seconds, 0);
  lines.push(
    `| all ${reports.length} | ${passed}/${reports.length} passed | ${
      columns.map((c) => _fmt(total(c[1]))).join(" | ")
    } | ${seconds.toFixed(0)} |`,
  );
  return lines.join("\n");
}

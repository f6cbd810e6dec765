// Bench report: figures, checks and chart series of one run, printed as tables and written to bench/; Deno.
import { lineChart, lineCharts } from "./svg_chart.ts";

/** One figure's value: a number, or a text such as "200/200". */
export type Figure = number | string;

/** One point of the sessions curve: new sessions, then the same sessions again (warm). */
export interface SessionsPoint {
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

/** Per-turn p50 at one transcript size. */
export interface TranscriptPoint {
  messages: number;
  p50_ms: number;
  p90_ms: number;
}

/** The baseline a run compared against (`--baseline`). */
export interface BaselineInfo {
  ref: string;
  commit: string;
  subject: string;
}

/** Rounds to one decimal. */
export const r1 = (x: number): number => Math.round(x * 10) / 10;
/** Rounds to two decimals. */
export const r2 = (x: number): number => Math.round(x * 100) / 100;

// Everything one run records; shared by a report and its prefixed views.
interface _Store {
  rows: { label: string; shown: string; keys: string[] }[];
  figures: Record<string, Figure>;
  labels: Map<string, string>;
  failures: string[];
  series: { transcript: TranscriptPoint[]; sessions: SessionsPoint[] };
  /** Tables of their own (markdown) printed after the figures, e.g. the cost table. */
  sections: { title: string; markdown: string }[];
}

/**
 * The figures of one run, in the order they were recorded: each is a row of the printed table
 * and a key in results.json. A `prefixed` view records the same way under prefixed keys and
 * labels (the baseline's figures: `baseline_` + the current run's key).
 */
export class Report {
  readonly #store: _Store;
  readonly #keyPrefix: string;
  readonly #labelPrefix: string;

  constructor(
    store: _Store = {
      rows: [],
      figures: {},
      labels: new Map(),
      failures: [],
      series: { transcript: [], sessions: [] },
      sections: [],
    },
    keyPrefix = "",
    labelPrefix = "",
  ) {
    this.#store = store;
    this.#keyPrefix = keyPrefix;
    this.#labelPrefix = labelPrefix;
  }

  /** A view recording into the same report with `key` and `label` put before each key and label. */
  prefixed(key: string, label: string): Report {
    return new Report(this.#store, this.#keyPrefix + key, this.#labelPrefix + label);
  }

  /** Records one figure (`shown` overrides the table cell). */
  figure(label: string, key: string, value: Figure, shown?: string): void {
    this.#row(label, shown ?? String(value), { [key]: value });
  }

  /** Records a ratio, shown as "1.23×". */
  ratio(label: string, key: string, value: number): void {
    this.figure(label, key, r2(value), `${r2(value)}×`);
  }

  /** Records figures shown in one row as "a / b / …" under `label`. */
  joined(label: string, values: Record<string, Figure>): void {
    this.#row(label, Object.values(values).join(" / "), values);
  }

  /** Records a table of its own (markdown), printed now and after the figures' table. */
  section(title: string, markdown: string): void {
    const full = this.#labelPrefix + title;
    this.#store.sections.push({ title: full, markdown });
    console.error(`  ${full}:\n${markdown}`);
  }

  /** Tables recorded with `section`. */
  get sections(): readonly { title: string; markdown: string }[] {
    return this.#store.sections;
  }

  /** Records a check that must hold; a false one fails the run. */
  check(label: string, key: string, ok: boolean, detail: string): void {
    this.figure(label, key, detail);
    if (!ok) this.fail(`${this.#labelPrefix}${label}: ${detail}`);
  }

  /** Records a failed request or check; any failure makes the run exit non-zero. */
  fail(detail: string): void {
    if (this.#store.failures.push(detail) === 1) {
      console.error(`  first failure: ${detail.slice(0, 300)}`);
    }
  }

  /** The chart series; phases add points, the writer sorts them. */
  get series(): _Store["series"] {
    return this.#store.series;
  }

  /** Failures so far. */
  get failures(): readonly string[] {
    return this.#store.failures;
  }

  /** Every figure by key. */
  get figures(): Readonly<Record<string, Figure>> {
    return this.#store.figures;
  }

  /** The table of every figure, in recording order (markdown). */
  table(): string {
    const rows = this.#store.rows.map((r) => `| ${r.label} | ${r.shown} |`);
    return ["| figure | value |", "|---|---|", ...rows].join("\n");
  }

  /**
   * Baseline and current side by side (markdown): each numeric figure that also has a
   * `baseline_` twin, with current / baseline.
   */
  comparison(baseline: BaselineInfo): string {
    const { figures, labels } = this.#store;
    const rows = Object.keys(figures).filter((key) =>
      !key.startsWith("baseline_") && typeof figures[key] === "number" &&
      typeof figures[`baseline_${key}`] === "number"
    ).map((key) => {
      const [now, then] = [figures[key] as number, figures[`baseline_${key}`] as number];
      const ratio = then ? `${r2(now / then)}×` : "–";
      return `| ${labels.get(key)} | ${key} | ${then} | ${now} | ${ratio} |`;
    });
    return [
      `| figure | key | baseline ${baseline.commit.slice(0, 7)} | current | current / baseline |`,
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n");
  }

  #row(label: string, shown: string, values: Record<string, Figure>): void {
    const fullLabel = this.#labelPrefix + label;
    const keys = Object.keys(values).map((k) => this.#keyPrefix + k);
    keys.forEach((key, i) => {
      this.#store.figures[key] = Object.values(values)[i];
      this.#store.labels.set(key, fullLabel);
    });
    this.#store.rows.push({ label: fullLabel, shown, keys });
    console.error(`  ${fullLabel}: ${shown}`);
  }
}

const _short = (text: string, n: number) => text.length > n ? `${text.slice(0, n - 1)}…` : text;

/** Where the run happened, for results.json and the last line of the output. */
export interface RunInfo {
  machine: Record<string, unknown>;
  runSeconds: number;
  baseline?: BaselineInfo;
}

/** Prints the tables and writes bench/results.json and the two SVG charts under `root`. */
export async function writeReport(report: Report, run: RunInfo, root: URL): Promise<void> {
  console.log(`\n${report.table()}\n`);
  for (const s of report.sections) console.log(`${s.title}:\n\n${s.markdown}\n`);
  if (run.baseline) {
    console.log(
      `baseline ${run.baseline.ref} = ${run.baseline.commit.slice(0, 7)} ` +
        `(${_short(run.baseline.subject, 80)}):\n\n${report.comparison(run.baseline)}\n`,
    );
  }
  const sessions = [...report.series.sessions].sort((a, b) => a.sessions - b.sessions);
  const transcript = [...report.series.transcript].sort((a, b) => a.messages - b.messages);
  await Deno.mkdir(new URL("bench/", root), { recursive: true });
  const results = {
    timestamp: new Date().toISOString(),
    machine: run.machine,
    run_seconds: run.runSeconds,
    ...(run.baseline ? { baseline: run.baseline } : {}),
    failed_requests: report.failures.length,
    figures: report.figures,
    sections: report.sections,
    series: { transcript, sessions },
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
      series: [{ name: "p50", points: transcript.map((p) => [p.messages, p.p50_ms]) }],
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
          { name: "new sessions", points: sessions.map((p) => [p.sessions, p.new_p50_ms]) },
          { name: "warm sessions", points: sessions.map((p) => [p.sessions, p.warm_p50_ms]) },
        ],
      },
      {
        title: "baton: throughput vs sessions at once",
        xLabel: "sessions at once",
        yLabel: "turns per second",
        logX: true,
        series: [
          { name: "new sessions", points: sessions.map((p) => [p.sessions, p.new_turns_per_s]) },
          { name: "warm sessions", points: sessions.map((p) => [p.sessions, p.warm_turns_per_s]) },
        ],
      },
    ]),
  );
  console.log(
    "wrote bench/results.json, bench/turn_time_vs_transcript.svg, bench/turn_time_vs_sessions.svg",
  );
}

// The cost phase's tables (markdown): what each kind of turn is billed, the rows it writes with the promise each buys, and a new chat's first message beside a warm chat's; Deno.
import type { CostCounts } from "./cost_counter.ts";
import type { TurnCost, TurnUsage } from "./prices.ts";
import { r2 } from "./report.ts";

/**
 * Why each table a turn writes is written: the promise (docs/concepts/guarantees.md) or feature that
 * needs the row. Tables not named here show up as "(not named)": a write to explain or cut.
 */
export const ROW_PROMISES: Readonly<Record<string, string>> = {
  inbox:
    "ack after the durable write; messages run once, in arrival order; never silence (an unfinished message is found again)",
  run: "one turn per session (the claim: who holds the session, its generation)",
  transcript: "the conversation the next turn sees",
  run_events: "runs API replay (GET /v1/runs/{id}/events, reconnecting streams)",
  outbox: "exactly-once reply parts (each part's send record)",
  seen_delivery:
    "a webhook delivered again runs no second turn (delivery keys past the inbox's day)",
  context_size: "compaction of long conversations (the last call's context size)",
  usage_day: "spend: per-day token usage (SESSION_TOKENS_PER_DAY, /usage, GET /v1/usage)",
  job: "scheduled turns (the job's next run)",
  job_run: "scheduled turns (the job's last runs)",
  event_outbox: "turn events to the message hook, sent once",
  spill: "large texts split across rows",
  schema_version: "a new session's schema (once per session)",
  "(schema)": "a new session's tables and indexes (once per session)",
  "(alarm)": "never silence: the watchdog alarm resumes a turn its object lost",
  "_cf_KV (kv API)":
    "sender records, session-open marker, conversation pointers, idempotency keys (key-value API)",
};

/** One kind of turn as measured: its counts summed over its turns and what one costs. */
export interface MeasuredKind {
  label: string;
  key: string;
  n: number;
  /** Counts summed over the `n` turns. */
  counts: CostCounts;
  usage: TurnUsage;
  cost: TurnCost;
  subrequests: number;
}

const _dollars = (x: number) => `$${x < 10 ? x.toFixed(2) : x.toFixed(1)}`;

/** The cost table (markdown): per kind, what is counted per turn and what a million cost. */
export function costTable(measured: MeasuredKind[]): string {
  const rows = measured.map((m) => {
    const u = m.usage, c = m.cost;
    const parts = Object.entries(c).filter(([k]) => k !== "total") as [string, number][];
    const [top, topCost] = parts.reduce((a, b) => (b[1] > a[1] ? b : a));
    const sub = Object.entries(m.counts.subrequests).map(([k, v]) => `${k} ${r2(v / m.n)}`);
    const doReqs = Object.entries(m.counts.do_requests).map(([k, v]) => `${k} ${r2(v / m.n)}`);
    return `| ${m.label} | ${r2(u.cpuMs)} | ${r2(u.workerRequests)} | ${r2(u.doRequests)}${
      doReqs.length ? ` (${doReqs.join(", ")})` : ""
    } | ${r2(u.sqlRowsRead)} / ${r2(u.sqlRowsWritten)} | ${r2(u.d1RowsRead)} / ${
      r2(u.d1RowsWritten)
    } | ${r2(m.subrequests)}${sub.length ? ` (${sub.join(", ")})` : ""} | ${r2(u.doActiveMs)} (${
      r2(m.counts.model_wait_ms / m.n)
    }) | ${_dollars(c.total)} | ${top} ${Math.round((100 * topCost) / (c.total || 1))} % |`;
  });
  return [
    "| kind of turn | workerd CPU ms | Worker requests | DO requests | SQLite rows read / written | D1 rows read / written | subrequests | DO active ms (model wait) | $ per million turns | dominated by |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Rows written per turn, table by table (columns: the kinds), with the promise each buys. */
export function rowsTable(measured: MeasuredKind[]): string {
  const batonKinds = measured.filter((m) => !m.key.startsWith("peer"));
  const tables = [
    ...new Set(
      batonKinds.flatMap((m) =>
        Object.keys(m.counts.sql).filter((t) => m.counts.sql[t].written > 0)
      ),
    ),
  ];
  const d1 = batonKinds.some((m) => m.counts.d1.written > 0);
  const rows = tables.map((t) =>
    `| ${t} | ${batonKinds.map((m) => r2((m.counts.sql[t]?.written ?? 0) / m.n)).join(" | ")} | ${
      ROW_PROMISES[t] ?? "(not named)"
    } |`
  );
  if (d1) {
    rows.push(
      `| D1 session_directory / session_user / session_usage | ${
        batonKinds.map((m) => r2(m.counts.d1.written / m.n)).join(" | ")
      } | the sessions directory (GET /v1/sessions, erasure by user, usage across sessions) |`,
    );
  }
  return [
    `| table | ${batonKinds.map((m) => m.label).join(" | ")} | promise it buys |`,
    `|---|${batonKinds.map(() => "---|").join("")}---|`,
    ...rows,
  ].join("\n");
}

/**
 * What a new chat's first message does that a warm chat's does not (issue 32, "first message like
 * the hundredth"), per message: objects started, calls, statements table by table, alarms, D1
 * statements. Markdown; null when either kind was not measured.
 */
export function firstMessageTable(measured: MeasuredKind[]): string | null {
  const warm = measured.find((m) => m.key === "tg_warm");
  const fresh = measured.find((m) => m.key === "tg_new");
  if (!warm || !fresh) return null;
  const rows: [string, (m: MeasuredKind) => number][] = [];
  const keysOf = (pick: (m: MeasuredKind) => Record<string, unknown>) =>
    [...new Set([...Object.keys(pick(warm)), ...Object.keys(pick(fresh))])].sort();
  for (const k of keysOf((m) => m.counts.instances ?? {})) {
    rows.push([`Durable Objects started: ${k}`, (m) => m.counts.instances?.[k] ?? 0]);
  }
  for (const k of keysOf((m) => m.counts.do_requests)) {
    rows.push([`DO requests: ${k}`, (m) => m.counts.do_requests[k] ?? 0]);
  }
  for (const t of keysOf((m) => m.counts.sql)) {
    rows.push([`SQLite statements: ${t}`, (m) => m.counts.sql[t]?.statements ?? 0]);
  }
  const total = (m: MeasuredKind, f: "statements" | "written") =>
    Object.values(m.counts.sql).reduce((a, t) => a + t[f], 0);
  rows.push(["SQLite statements, all", (m) => total(m, "statements")]);
  rows.push(["SQLite rows written, all", (m) => total(m, "written")]);
  rows.push(["D1 statements", (m) => m.counts.d1.statements ?? 0]);
  rows.push(["D1 rows written", (m) => m.counts.d1.written]);
  for (const k of keysOf((m) => m.counts.subrequests)) {
    rows.push([`subrequests: ${k}`, (m) => m.counts.subrequests[k] ?? 0]);
  }
  const per = (m: MeasuredKind, f: (m: MeasuredKind) => number) => f(m) / m.n;
  return [
    "| per message | warm chat | new chat | new − warm |",
    "|---|---|---|---|",
    ...rows.map(([label, f]) =>
      `| ${label} | ${r2(per(warm, f))} | ${r2(per(fresh, f))} | ${
        r2(per(fresh, f) - per(warm, f))
      } |`
    ),
  ].join("\n");
}

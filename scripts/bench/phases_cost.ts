// Bench phase "cost": what each kind of turn is billed on Cloudflare (counted in a wrapped copy of baton and of the peer), in dollars per million turns, and the rows each turn writes with the promise each buys; Deno.
import { costCountingBuild, type CostCounts, readCost } from "./cost_counter.ts";
import {
  doDurationDollars,
  dollarsPerMillionTurns,
  PRICES,
  type TurnCost,
  type TurnUsage,
} from "./prices.ts";
import { cpuMs } from "./proc.ts";
import { r2, type Report } from "./report.ts";
import { API_KEY, type Baton, type Rig } from "./rig.ts";
import { sendTelegramUpdate, TG_SECRET, TG_TOKEN } from "./telegram.ts";
import { type BenchWorker, bundleWorker, startBundled } from "./worker.ts";

/** Turns per kind: counts are exact, so a few suffice; CPU is averaged over them. */
const N = 10;
/** Scheduled jobs measured together (each in a chat of its own). */
const JOBS = 5;
/** The long model call whose Durable Object wall time is priced. */
const LONG_CALL_MS = 10_000;
/** baton's Durable Object classes, wrapped for counting. */
const _CLASSES = ["SessionDO", "AccessDO", "ConversationPointerDO", "IdempotencyKeyDO"];

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

/** One kind of turn as measured: its counts per turn and what they cost. */
interface _Measured {
  label: string;
  key: string;
  n: number;
  /** Counts summed over the `n` turns. */
  counts: CostCounts;
  usage: TurnUsage;
  cost: TurnCost;
  subrequests: number;
}

/**
 * Each kind of turn on a fresh copy of baton wrapped by scripts/bench/cost_counter.ts (API turn,
 * Telegram warm and new chat, a turn with two tool calls, a scheduled turn), the peer's Telegram
 * turns the same way, and one turn whose model call takes 10 s: the counts, the dollars per
 * million turns, and the rows each turn writes with the promise each buys.
 */
export async function cost(rig: Rig, report: Report): Promise<void> {
  const script = await costCountingBuild(rig.baton.scriptPath, _CLASSES);
  const measured: _Measured[] = [];
  let long: CostCounts | undefined;
  await rig.onFresh({ ...rig.baton, scriptPath: script }, async (baton) => {
    measured.push(...await _batonKinds(rig, report, baton));
    long = await _longCall(rig, report, baton);
  });
  measured.push(...await _peerKinds(rig, report));
  report.section(
    `cost per kind of turn (counted; prices of ${PRICES.readOn}, scripts/bench/prices.ts)`,
    _costTable(measured),
  );
  report.section(
    "rows written per turn, by table, and the promise each buys",
    _rowsTable(measured),
  );
  const first = _firstMessageTable(measured);
  if (first) report.section("a new chat's first message beside a warm chat's, per message", first);
  for (const m of measured) {
    report.joined(`cost: ${m.label}: $ per million turns / rows written per turn / DO active ms`, {
      [`cost_${m.key}_usd_per_million`]: r2(m.cost.total),
      [`cost_${m.key}_rows_written`]: r2(m.usage.sqlRowsWritten + m.usage.d1RowsWritten),
      [`cost_${m.key}_do_active_ms`]: r2(m.usage.doActiveMs),
    });
  }
  if (long) {
    report.joined(
      `cost: a ${
        LONG_CALL_MS / 1000
      } s model call: DO active ms / model wait ms / duration $ per million turns`,
      {
        cost_long_call_do_active_ms: long.do_active_ms,
        cost_long_call_model_wait_ms: long.model_wait_ms,
        cost_long_call_duration_usd_per_million: r2(doDurationDollars(long.do_active_ms)),
      },
    );
  }
}

/** The baton kinds, in order, on the counting copy `baton`. */
async function _batonKinds(rig: Rig, report: Report, baton: Baton): Promise<_Measured[]> {
  const w = baton.worker;
  const check = (s: { ok: boolean; error?: string }) => {
    if (!s.ok) report.fail(`cost: ${s.error}`);
  };
  const out: _Measured[] = [];
  out.push(
    await _measure(w, "API turn (warm session)", "api", N, async (i) => {
      check(await rig.turn(baton, "cost-api", `cost api ${i}`));
    }, async () => check(await rig.turn(baton, "cost-api", "cost api warm-up"))),
  );
  let message = 700_000;
  const tg = (chatId: number, text: string) =>
    rig.telegramUpdate(baton, { chatId, messageId: ++message, text });
  out.push(
    await _measure(w, "Telegram, warm chat", "tg_warm", N, async (i) => {
      check(await tg(7_000_000, `cost tg warm ${i}`));
    }, async () => check(await tg(7_000_000, "cost tg warm-up"))),
  );
  out.push(
    await _measure(w, "Telegram, new chat", "tg_new", N, async (i) => {
      check(await tg(7_100_000 + i, `cost tg new ${i}`));
    }),
  );
  out.push(await _toolTurns(rig, baton, check));
  out.push(await _scheduledTurns(rig, report, baton, tg));
  return out;
}

/** API turns whose model asks for `session_info` twice before it answers. */
async function _toolTurns(
  rig: Rig,
  baton: Baton,
  check: (s: { ok: boolean; error?: string }) => void,
): Promise<_Measured> {
  rig.fake.script((req) => {
    if (!req.lastUserText.startsWith("cost tools")) return { kind: "text", text: req.lastUserText };
    // deno-lint-ignore no-explicit-any
    const messages: any[] = req.body?.messages ?? [];
    let results = 0;
    for (let i = messages.length - 1; i >= 0 && messages[i].role !== "user"; i--) {
      if (messages[i].role === "tool") results++;
    }
    return results < 2
      ? { kind: "tool_call", name: "session_info", args: {} }
      : { kind: "text", text: req.lastUserText };
  });
  try {
    return await _measure(baton.worker, "turn with two tool calls (API)", "tools", N, async (i) => {
      rig.counts.otherModelCalls += 2; // three model calls for one turn
      check(await rig.turn(baton, "cost-tools", `cost tools ${i}`));
    }, async () => {
      rig.counts.otherModelCalls += 2;
      check(await rig.turn(baton, "cost-tools", "cost tools warm-up"));
    });
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
}

/**
 * `JOBS` one-off jobs, each in a Telegram chat of its own (its session made by a message first),
 * due 3 s after creation; counted from after the creations until every job's reply has arrived.
 */
async function _scheduledTurns(
  rig: Rig,
  report: Report,
  baton: Baton,
  tg: (chatId: number, text: string) => Promise<{ ok: boolean; error?: string }>,
): Promise<_Measured> {
  const chats = Array.from({ length: JOBS }, (_, i) => 7_200_000 + i);
  for (const chat of chats) await tg(chat, `cost job chat ${chat}`);
  const sent = (chat: number) => rig.telegram.sends.filter((s) => s.chatId === chat).length;
  const before = new Map(chats.map((chat) => [chat, sent(chat)]));
  return await _measure(
    baton.worker,
    "scheduled turn (job, Telegram chat)",
    "job",
    JOBS,
    // Nothing per turn: the jobs are made before counting starts and fire on their own.
    () => Promise.resolve(),
    async () => {
      for (const chat of chats) {
        rig.counts.batonTurns++;
        const res = await baton.worker.fetch("/v1/jobs", {
          method: "POST",
          headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({
            session: `telegram:${chat}`,
            prompt: `cost job ${chat}`,
            schedule: { in: 3 },
          }),
        });
        if (res.status !== 201) {
          report.fail(`cost: POST /v1/jobs ${res.status} ${await res.text()}`);
        } else await res.body?.cancel();
      }
    },
    async () => {
      const t0 = performance.now();
      while (chats.some((chat) => sent(chat) <= before.get(chat)!)) {
        if (performance.now() - t0 > 20_000) {
          report.fail("cost: a scheduled job's reply did not arrive within 20 s");
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  );
}

/** One API turn whose model call takes `LONG_CALL_MS`: the object's wall time around it. */
async function _longCall(rig: Rig, report: Report, baton: Baton): Promise<CostCounts> {
  rig.fake.script((req) => ({
    kind: "text",
    text: req.lastUserText,
    delayMs: req.lastUserText.startsWith("cost long") ? LONG_CALL_MS : 0,
  }));
  try {
    await rig.turn(baton, "cost-long", "cost long warm-up (short)");
    await _idle(baton.worker);
    await readCost(baton.worker.url, true);
    const sample = await rig.turn(baton, "cost-long", "cost long call");
    if (!sample.ok) report.fail(`cost: long call: ${sample.error}`);
    await _idle(baton.worker);
    return await readCost(baton.worker.url, true);
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
}

/** The peer (in-memory, ack then handle) wrapped the same way: Telegram warm chat, new chat. */
async function _peerKinds(rig: Rig, report: Report): Promise<_Measured[]> {
  const peerScript = await bundleWorker(
    "scripts/bench/peer_telegram_worker.ts",
    ".tmp/bench-build/peer-cost/index.js",
  );
  const peer = await startBundled(await costCountingBuild(peerScript, []), {
    vars: {
      LLM_BASE_URL: rig.fake.url,
      LLM_API_KEY: "x",
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_BOT_TOKEN: TG_TOKEN,
      TELEGRAM_API_ROOT: rig.telegram.url,
    },
    durableObjects: {},
  });
  try {
    let message = 800_000;
    const send = async (chatId: number, text: string) => {
      rig.counts.otherModelCalls++;
      const s = await sendTelegramUpdate(peer.url, rig.telegram, {
        chatId,
        messageId: ++message,
        text,
      });
      if (!s.ok) report.fail(`cost: peer: ${s.error}`);
    };
    return [
      await _measure(
        peer,
        "peer: Telegram, warm chat",
        "peer_tg_warm",
        N,
        (i) => send(9_500_000, `cost peer warm ${i}`),
        () => send(9_500_000, "cost peer warm-up"),
      ),
      await _measure(
        peer,
        "peer: Telegram, new chat",
        "peer_tg_new",
        N,
        (i) => send(9_600_000 + i, `cost peer new ${i}`),
      ),
    ];
  } finally {
    await peer.dispose();
  }
}

/**
 * Runs `warm` (not counted), then `one(0..n-1)`, each followed by a wait for every object to go
 * idle so that each turn's trailing work (timers, directory writes) is its own; then `settle`.
 * Returns the counts summed over the turns and the usage per turn.
 */
async function _measure(
  worker: BenchWorker,
  label: string,
  key: string,
  n: number,
  one: (i: number) => Promise<void>,
  warm?: () => Promise<void>,
  settle?: () => Promise<void>,
): Promise<_Measured> {
  if (warm) await warm();
  await _idle(worker);
  await readCost(worker.url, true);
  const cpu0 = await cpuMs(worker.pids);
  for (let i = 0; i < n; i++) {
    await one(i);
    await _idle(worker);
  }
  if (settle) await settle();
  await _idle(worker);
  const cpu = (await cpuMs(worker.pids) - cpu0) / n;
  const counts = await readCost(worker.url, true);
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const tables = Object.values(counts.sql);
  const usage: TurnUsage = {
    workerRequests: counts.worker_requests / n,
    cpuMs: cpu,
    doRequests: sum(counts.do_requests) / n,
    doActiveMs: counts.do_active_ms / n,
    sqlRowsRead: tables.reduce((a, t) => a + t.read, 0) / n,
    sqlRowsWritten: tables.reduce((a, t) => a + t.written, 0) / n,
    d1RowsRead: counts.d1.read / n,
    d1RowsWritten: counts.d1.written / n,
  };
  return {
    label,
    key,
    n,
    counts,
    usage,
    cost: dollarsPerMillionTurns(usage),
    subrequests: sum(counts.subrequests) / n,
  };
}

/**
 * Waits (5 s at most) until no object has unfinished work: calls, timers, fetches. Asks every
 * 100 ms: each question is a Worker request whose CPU lands in the turn's figure.
 */
async function _idle(worker: BenchWorker): Promise<void> {
  const t0 = performance.now();
  while ((await readCost(worker.url)).busy_objects > 0 && performance.now() - t0 < 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const _dollars = (x: number) => `$${x < 10 ? x.toFixed(2) : x.toFixed(1)}`;

/** The cost table (markdown): per kind, what is counted per turn and what a million cost. */
function _costTable(measured: _Measured[]): string {
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
function _rowsTable(measured: _Measured[]): string {
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
function _firstMessageTable(measured: _Measured[]): string | null {
  const warm = measured.find((m) => m.key === "tg_warm");
  const fresh = measured.find((m) => m.key === "tg_new");
  if (!warm || !fresh) return null;
  const rows: [string, (m: _Measured) => number][] = [];
  const keysOf = (pick: (m: _Measured) => Record<string, unknown>) =>
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
  const total = (m: _Measured, f: "statements" | "written") =>
    Object.values(m.counts.sql).reduce((a, t) => a + t[f], 0);
  rows.push(["SQLite statements, all", (m) => total(m, "statements")]);
  rows.push(["SQLite rows written, all", (m) => total(m, "written")]);
  rows.push(["D1 statements", (m) => m.counts.d1.statements ?? 0]);
  rows.push(["D1 rows written", (m) => m.counts.d1.written]);
  for (const k of keysOf((m) => m.counts.subrequests)) {
    rows.push([`subrequests: ${k}`, (m) => m.counts.subrequests[k] ?? 0]);
  }
  const per = (m: _Measured, f: (m: _Measured) => number) => f(m) / m.n;
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

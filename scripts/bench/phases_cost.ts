// Bench phase "cost": what each kind of turn is billed on Cloudflare (counted in a wrapped copy of baton and of the peer), in dollars per million turns, and the rows each turn writes with the promise each buys; Deno.
import { costCountingBuild, type CostCounts, readCost } from "./cost_counter.ts";
import { costTable, firstMessageTable, type MeasuredKind, rowsTable } from "./cost_tables.ts";
import { doDurationDollars, dollarsPerMillionTurns, PRICES, type TurnUsage } from "./prices.ts";
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
 * Each kind of turn on a fresh copy of baton wrapped by scripts/bench/cost_counter.ts (API turn,
 * Telegram warm and new chat, a turn with two tool calls, a scheduled turn), the peer's Telegram
 * turns the same way, and one turn whose model call takes 10 s: the counts, the dollars per
 * million turns, and the rows each turn writes with the promise each buys.
 */
export async function cost(rig: Rig, report: Report): Promise<void> {
  const script = await costCountingBuild(rig.baton.scriptPath, _CLASSES);
  const measured: MeasuredKind[] = [];
  let long: CostCounts | undefined;
  await rig.onFresh({ ...rig.baton, scriptPath: script }, async (baton) => {
    measured.push(...await _batonKinds(rig, report, baton));
    long = await _longCall(rig, report, baton);
  });
  measured.push(...await _peerKinds(rig, report));
  report.section(
    `cost per kind of turn (counted; prices of ${PRICES.readOn}, scripts/bench/prices.ts)`,
    costTable(measured),
  );
  report.section(
    "rows written per turn, by table, and the promise each buys",
    rowsTable(measured),
  );
  const first = firstMessageTable(measured);
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
async function _batonKinds(rig: Rig, report: Report, baton: Baton): Promise<MeasuredKind[]> {
  const w = baton.worker;
  const check = (s: { ok: boolean; error?: string }) => {
    if (!s.ok) report.fail(`cost: ${s.error}`);
  };
  const out: MeasuredKind[] = [];
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
): Promise<MeasuredKind> {
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
): Promise<MeasuredKind> {
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
async function _peerKinds(rig: Rig, report: Report): Promise<MeasuredKind[]> {
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
): Promise<MeasuredKind> {
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

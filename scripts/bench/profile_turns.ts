// `npm run bench:profile [-- api|telegram [turns]]`: a V8 CPU profile of workerd serving warm turns, self time by function, file and package; Deno.
import { startFakeModel } from "../../lib/testing/fake_model.ts";
import { postChat } from "./client.ts";
import {
  bundleLineFiles,
  type FullCpuProfile,
  Inspector,
  type SelfTime,
  selfTimes,
} from "./cpu_profile.ts";
import { cpuMs } from "./proc.ts";
import { API_KEY, MAX_QUEUED } from "./rig.ts";
import { sendTelegramUpdate, startTelegramObserver, TG_SECRET, TG_TOKEN } from "./telegram.ts";
import { bundleWorker, startBundled } from "./worker.ts";

/** Turns before profiling starts: the session's object, its statements and V8's JIT warmed up. */
const _WARM = 50;
/** V8's sampling interval (µs): fine enough to see a turn of a few ms in several samples. */
const _SAMPLING_US = 100;

/** A free TCP port on 127.0.0.1, for workerd's inspector. */
function _freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function _table(title: string, rows: SelfTime[], top: number, perTurn: number): void {
  console.log(`\n${title} (self ms per turn, share of sampled CPU)`);
  for (const row of rows.slice(0, top)) {
    const ms = (row.ms / perTurn).toFixed(3).padStart(7);
    console.log(`${ms}  ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.key}`);
  }
}

async function main(): Promise<void> {
  const kind = Deno.args[0] ?? "api";
  const turns = Number(Deno.args[1] ?? 300);
  if (kind !== "api" && kind !== "telegram" || !(turns > 0)) {
    console.error("usage: npm run bench:profile [-- api|telegram [turns]]");
    Deno.exit(2);
  }
  const fake = await startFakeModel();
  const telegram = startTelegramObserver();
  const script = await bundleWorker("functions/index.ts", ".tmp/bench-build/profile/index.js");
  const inspectorPort = _freePort();
  const worker = await startBundled(script, {
    vars: {
      LLM_BASE_URL: fake.url,
      LLM_API_KEY: "x",
      GATEWAY_API_KEY: API_KEY,
      MAX_QUEUED: String(MAX_QUEUED),
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_BOT_TOKEN: TG_TOKEN,
      TELEGRAM_API_ROOT: telegram.url,
      ACCESS_POLICY: "open",
    },
    durableObjects: {
      SESSIONS: "SessionDO",
      ACCESS: "AccessDO",
      CONVERSATIONS: "ConversationPointerDO",
      IDEMPOTENCY_KEYS: "IdempotencyKeyDO",
    },
    inspectorPort,
  });
  let failed = 0;
  const turn = async (i: number) => {
    const sample = kind === "api"
      ? await postChat(new URL("v1/chat/completions", worker.url).href, {
        authorization: `Bearer ${API_KEY}`,
        "content-type": "application/json",
        "x-session-id": "bench-profile",
      }, `profile ${i}`)
      : await sendTelegramUpdate(new URL("webhooks/telegram", worker.url).href, telegram, {
        chatId: 7_300_001,
        messageId: i + 1,
        text: `profile ${i}`,
      });
    if (!sample.ok && failed++ < 3) console.error(`turn ${i}: ${sample.error}`);
  };
  let inspector: Inspector | undefined;
  try {
    for (let i = 0; i < _WARM; i++) await turn(i);
    // Miniflare names the user Worker's isolate `core:user:<name>`; its Durable Objects run in it.
    inspector = await Inspector.connect(inspectorPort, (title) => title.endsWith("core:user:"));
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: _SAMPLING_US });
    const cpu0 = await cpuMs(worker.pids);
    await inspector.send("Profiler.start");
    for (let i = _WARM; i < _WARM + turns; i++) await turn(i);
    const { profile } = await inspector.send<{ profile: FullCpuProfile }>("Profiler.stop");
    const cpu = (await cpuMs(worker.pids) - cpu0) / turns;
    const out = new URL(`../../.tmp/bench-profile-${kind}.cpuprofile`, import.meta.url);
    await Deno.writeTextFile(out, JSON.stringify(profile));
    const times = selfTimes(profile, bundleLineFiles(await Deno.readTextFile(script)), "index.js");
    console.log(
      `${kind}: ${turns} warm turns (${failed} failed); workerd CPU ${cpu.toFixed(2)} ms/turn ` +
        `(/proc, profiler on); sampled JS ${(times.busyMs / turns).toFixed(2)} ms/turn; ` +
        `profile in ${out.pathname}`,
    );
    _table("by package", times.byPackage, 12, turns);
    _table("by file", times.byFile, 25, turns);
    _table("by function", times.byFunction, 40, turns);
  } finally {
    inspector?.close();
    await worker.dispose();
    await telegram.close();
    await fake.close();
  }
  if (failed) Deno.exitCode = 1;
}

await main();

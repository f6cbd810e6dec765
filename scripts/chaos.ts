// `npm run chaos`: baton under wrangler dev over every way in, faulty fakes, SIGKILLs; tables per seed, a summary, or a soak; exits 1 on a failed check; Deno.
import {
  CHAOS_WAYS,
  type ChaosReport,
  type ChaosWay,
  formatChaosReport,
  formatChaosSummary,
  formatSoakReport,
  runChaos,
  runSoak,
} from "./chaos/mod.ts";
import { killAllWranglerDevs } from "./_wrangler_dev.ts";

const USAGE = `npm run chaos -- [options]

Runs baton under \`wrangler dev\` on persisted local state and feeds it over every way in at once
(Telegram, Slack, Discord, GitHub, WhatsApp, LINE, Twilio, Teams, Google Chat, the generic webhook,
chat completions, the runs API), with fake platform APIs and a fake model that fail on purpose,
duplicated and bad deliveries, replays under fresh delivery ids, a tenant flooding past its turn
quota, and SIGKILLs of the runtime's process group at moments drawn from
the seed (plus one while a platform holds a send open). Prints a table per seed; exits 1 if a
must-be-zero figure is not zero.

  --seed=S            repeat the plan of seed S (default: a random seed, printed)
  --seeds=N           run N seeds (S, S+1, …; fresh state each), a table each, then a summary
  --messages=N        inbound deliveries per seed, bad ones included (default 2000; reduced 300)
  --sessions=N        sessions, round-robin over the ways in (default 60; reduced 14)
  --kills=N           kills at drawn moments (default: 2 to 5, drawn from the seed)
  --no-hold-kill      leave out the kill while a platform holds a send open
  --reduced           the size npm test runs (300 deliveries, 14 sessions)
  --ways=a,b          only these ways in (${CHAOS_WAYS.join(", ")})
  --reply-in-doubt=M  baton's REPLY_IN_DOUBT (resend or skip; default baton's default)
  --platform-429=R    share of platform sends and read-backs answered 429 (default 0.05)
  --platform-5xx=R    share of platform sends answered 5xx, half after storing (default 0.02)
  --model-fail=R      share of model calls failing: 429, 500 or a stall (default 0.2)
  --replays=R         share of platform messages replayed under fresh delivery ids (default 0.1)
  --media=R           share of Telegram messages that are photos, some downloads slow or failing (default 0.2)
  --files-out=R       share of Telegram messages answered with a file (sendPhoto) (default 0.3)
  --no-flood          leave out the flood of /v1/jobs/{id}/run and chat calls past a tenant's quota
  --minutes=M         soak instead: M minutes of steady traffic, a kill every ~2 minutes, workerd
                      RSS and per-minute figures (must not drift)
  --rate=R            soak: messages per second (default 4)
  --kill-every=S      soak: seconds between kills (default 120; 0 for none)
  --help              this text

Set CHAOS_BATON_ROOT to run another checkout of baton (with its own node_modules).`;

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    killAllWranglerDevs();
    Deno.exit(signal === "SIGINT" ? 130 : 143);
  });
}

const flags = new Map(
  Deno.args.map((arg) => {
    const [name, value = "true"] = arg.replace(/^--/, "").split("=");
    return [name, value] as const;
  }),
);
const known = [
  "kill-every",
  "platform-429",
  "platform-5xx",
  "model-fail",
  "replays",
  "media",
  "files-out",
  "no-flood",
  "seed",
  "seeds",
  "messages",
  "sessions",
  "kills",
  "no-hold-kill",
  "reduced",
  "ways",
  "reply-in-doubt",
  "minutes",
  "rate",
  "help",
];
const unknown = [...flags.keys()].filter((f) => !known.includes(f));
if (flags.has("help") || unknown.length) {
  if (unknown.length) console.error(`unknown option ${unknown.map((f) => `--${f}`).join(", ")}\n`);
  console.log(USAGE);
  Deno.exit(unknown.length ? 2 : 0);
}

function number(name: string, fallback: number): number {
  const value = Number(flags.get(name) ?? fallback);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} must be a non-negative number`);
    Deno.exit(2);
  }
  return value;
}

const ways = flags.has("ways") ? flags.get("ways")!.split(",") as ChaosWay[] : [...CHAOS_WAYS];
if (ways.some((w) => !CHAOS_WAYS.includes(w))) {
  console.error(`--ways takes ${CHAOS_WAYS.join(", ")}`);
  Deno.exit(2);
}
const replyInDoubt = flags.get("reply-in-doubt") as "resend" | "skip" | undefined;
if (replyInDoubt !== undefined && replyInDoubt !== "resend" && replyInDoubt !== "skip") {
  console.error("--reply-in-doubt takes resend or skip");
  Deno.exit(2);
}
const reduced = flags.has("reduced");
/** Fault rates given on the command line (each a share between 0 and 1). */
const rates: { platform429Rate?: number; platform5xxRate?: number; modelFailRate?: number } = {};
for (
  const [flag, key] of [["platform-429", "platform429Rate"], ["platform-5xx", "platform5xxRate"], [
    "model-fail",
    "modelFailRate",
  ]] as const
) {
  if (!flags.has(flag)) continue;
  const value = number(flag, 0);
  if (value > 1) {
    console.error(`--${flag} is a share between 0 and 1`);
    Deno.exit(2);
  }
  rates[key] = value;
}
const firstSeed = Math.floor(number("seed", Math.floor(Math.random() * 1e6)));
const log = (line: string) => console.log(`  ${line}`);

if (flags.has("minutes")) {
  const minutes = number("minutes", 10);
  console.log(`chaos soak: ${minutes} min at ${number("rate", 4)} messages/s, seed ${firstSeed}`);
  const soak = await runSoak({
    ...rates,
    minutes,
    rate: number("rate", 4),
    killEverySeconds: number("kill-every", 120),
    seed: firstSeed,
    ways,
    replyInDoubt,
    log,
  });
  console.log();
  console.log(formatSoakReport(soak));
  for (const problem of soak.problems.slice(0, 40)) console.log(`  ! ${problem}`);
  console.log(soak.ok ? "chaos soak: passed" : "chaos soak: FAILED");
  Deno.exit(soak.ok ? 0 : 1);
}

const seeds = Math.max(1, Math.floor(number("seeds", 1)));
const reports: ChaosReport[] = [];
for (let i = 0; i < seeds; i++) {
  const seed = firstSeed + i;
  const options = {
    seed,
    messages: Math.floor(number("messages", reduced ? 300 : 2_000)),
    sessions: Math.floor(number("sessions", reduced ? 14 : 60)),
    ...(flags.has("kills") ? { kills: Math.floor(number("kills", 2)) } : {}),
    holdKill: !flags.has("no-hold-kill"),
    flood: !flags.has("no-flood"),
    ...(flags.has("replays") ? { replayRate: number("replays", 0.1) } : {}),
    ...(flags.has("media") ? { mediaRate: number("media", 0.2) } : {}),
    ...(flags.has("files-out") ? { filesOutRate: number("files-out", 0.3) } : {}),
    ...rates,
    ways,
    replyInDoubt,
    log,
  };
  console.log(
    `\nchaos seed ${seed} (--seed=${seed} repeats the plan): ${options.messages} deliveries over ${options.sessions} sessions, ${ways.length} ways in`,
  );
  const report = await runChaos(options);
  reports.push(report);
  console.log();
  console.log(formatChaosReport(report));
  console.log(
    `\nseed ${seed}: ${report.ok ? "passed" : "FAILED"} in ${report.seconds.toFixed(1)} s`,
  );
  for (const problem of report.problems.slice(0, 40)) console.log(`  ! ${problem}`);
}
if (seeds > 1) {
  console.log("\nsummary\n");
  console.log(formatChaosSummary(reports));
}
const ok = reports.every((r) => r.ok);
console.log(ok ? "chaos: passed" : "chaos: FAILED");
Deno.exit(ok ? 0 : 1);

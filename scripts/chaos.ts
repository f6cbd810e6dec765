// `npm run chaos`: baton under wrangler dev with faulty fakes and two SIGKILLs; prints the table, exits 1 on a failed check; Deno.
import { formatChaosReport, runChaos } from "./_chaos_run.ts";
import { killAllWranglerDevs } from "./_wrangler_dev.ts";

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    killAllWranglerDevs();
    Deno.exit(signal === "SIGINT" ? 130 : 143);
  });
}

const _flags = new Map(
  Deno.args.map((arg) => {
    const [name, value = "true"] = arg.replace(/^--/, "").split("=");
    return [name, value] as const;
  }),
);

function _number(name: string, fallback: number): number {
  const value = Number(_flags.get(name) ?? fallback);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`--${name} must be a whole number`);
    Deno.exit(2);
  }
  return value;
}

const reduced = _flags.has("reduced");
const options = {
  messages: _number("messages", reduced ? 300 : 2_000),
  sessions: _number("sessions", reduced ? 10 : 50),
  kills: _number("kills", 2),
  seed: _number("seed", Math.floor(Math.random() * 1e6)),
};
console.log(
  `chaos: ${options.messages} messages over ${options.sessions} sessions, ${options.kills} kills, seed ${options.seed} (--seed=${options.seed} repeats the plan)`,
);
const report = await runChaos({ ...options, log: (line) => console.log(`  ${line}`) });
console.log();
console.log(formatChaosReport(report));
console.log(`\n${report.seconds.toFixed(1)} s`);
for (const problem of report.problems.slice(0, 30)) console.log(`  ! ${problem}`);
console.log(report.ok ? "chaos: passed" : "chaos: FAILED");
Deno.exit(report.ok ? 0 : 1);

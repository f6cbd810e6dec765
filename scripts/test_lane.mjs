// `npm test` and `npm run test:all`: runs a test lane step by step and prints what each step took; Node.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = join(root, "node_modules", ".bin", "deno");

/**
 * Test files only the full lane runs: each starts `wrangler dev` (or Chromium) and runs for
 * minutes. Everything else runs in both lanes, the fuzzer included (at FUZZ_RUNS cases a route).
 */
const FULL_ONLY = [
  "test/chaos_run_test.ts",
  "test/console_test.ts",
  "test/console_data_test.ts",
];

/** The developer lane's goal, in seconds (issue 25): printed against what the run took. */
const DEV_GOAL_S = 5 * 60;

/**
 * Fuzzed cases per route: a smoke in the developer lane, 1,000 in the full lane. At 2,000 the one
 * workerd of the fuzz run holds thousands of live session and access objects, and the local
 * runtime's SQLite runs out of memory (SQLITE_NOMEM) for all of them; until the fuzzer starts a
 * Worker per group of routes, the full lane runs half as many.
 */
const FUZZ_RUNS = { dev: "100", all: "1000" };

const lane = process.argv[2] ?? "dev";
if (lane !== "dev" && lane !== "all") {
  console.error(`usage: node scripts/test_lane.mjs [dev|all] (got ${lane})`);
  process.exit(2);
}

// wrangler (the bundle check, chaos, the console test) stays offline: toolchain.md §3.
const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  FUZZ_RUNS: process.env.FUZZ_RUNS ?? FUZZ_RUNS[lane],
};

/** One step: a name and the command that runs it. */
const steps = [
  ["type check", "npm", ["run", "--silent", "check"]],
  ["lint and format", deno, ["lint", "--quiet"]],
  ["", deno, ["fmt", "--check", "--quiet"]],
  // Files run two at a time (DENO_JOBS overrides): most of a workerd test is waiting on its
  // fakes and timers, so two files share the two cores well.
  [
    `unit, conformance and workerd tests (FUZZ_RUNS=${env.FUZZ_RUNS})`,
    deno,
    ["test", "-A", "--parallel", `--ignore=${FULL_ONLY.join(",")}`],
  ],
];
if (lane === "all") {
  // One at a time: each kills and restarts workerd on purpose and must not starve the others.
  steps.push(["chaos runs and the browser tests", deno, ["test", "-A", ...FULL_ONLY]]);
}

const times = [];
const started = Date.now();
for (const [name, command, args] of steps) {
  const t0 = Date.now();
  const label = name || times.at(-1)?.[0] || command;
  console.log(`\n▶ ${label}: ${[command.replace(root + "/", ""), ...args].join(" ")}`);
  const run = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  const seconds = (Date.now() - t0) / 1000;
  if (name) times.push([name, seconds]);
  else times.at(-1)[1] += seconds;
  if (run.status !== 0) {
    _summary(false);
    process.exit(run.status ?? 1);
  }
}
_summary(true);

function _summary(passed) {
  const total = (Date.now() - started) / 1000;
  console.log(
    `\n${lane === "dev" ? "npm test" : "npm run test:all"}: ${passed ? "passed" : "FAILED"}`,
  );
  for (const [name, seconds] of times) console.log(`  ${_clock(seconds).padStart(7)}  ${name}`);
  const goal = lane === "dev"
    ? ` (goal ≤ ${_clock(DEV_GOAL_S)}: ${total <= DEV_GOAL_S ? "met" : "missed"})`
    : "";
  console.log(`  ${_clock(total).padStart(7)}  in all${goal}`);
}

function _clock(seconds) {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

// baton under `wrangler dev` for the chaos run: SIGKILL and restart on the same state, per-kill log segments, workerd RSS; Deno.
import { bundleWorker } from "../../test/_support/worker.ts";
import { freePort, startWranglerDev, type WranglerDev } from "../_wrangler_dev.ts";

/** One kill of the runtime's process group. */
export interface KillRecord {
  /** When (ms since the epoch). */
  at: number;
  /** Why: "random" (a moment drawn from the seed) or "held <platform> send". */
  reason: string;
  /** Byte offset of the wrangler log where the restart after this kill begins. */
  logOffset: number;
}

/** A restartable baton. */
export interface ChaosRuntime {
  url: string;
  /** Resolves when the runtime is up (at once unless a restart is under way). */
  up(): Promise<void>;
  /** SIGKILLs the process group, waits a moment, starts it again on the same state. */
  killAndRestart(reason: string): Promise<void>;
  kills: KillRecord[];
  /** The log after each start: [0] the first start's, [j] the one after kill j. */
  logSegments(): Promise<string[]>;
  /** When the current start answered its first health check (ms since the epoch). */
  upSince(): number;
  /** Resident memory of the workerd processes of the current start, in KiB (null: none found). */
  workerdRssKiB(): number | null;
  /** Stops the runtime gently (its log flushed); SIGKILL after a few seconds. */
  stop(): Promise<void>;
}

/**
 * Starts baton with `vars` on state under `dir` (kept across restarts). `pause` draws the pause
 * between a kill and the restart (ms).
 */
export async function startChaosRuntime(options: {
  dir: string;
  vars: Record<string, string>;
  pause: () => number;
  /** Seconds since sending began, for the log lines. */
  clock: () => number;
  log: (line: string) => void;
}): Promise<ChaosRuntime> {
  const root = Deno.env.get("CHAOS_BATON_ROOT") ?? new URL("../../", import.meta.url).pathname;
  const devOptions = {
    config: await _freezeBuild(root, options.dir),
    port: freePort(),
    inspectorPort: freePort(),
    persistDir: `${options.dir}/state`,
    logFile: `${options.dir}/wrangler.log`,
    vars: options.vars,
    root,
    // "log": the runtime's warnings and each request's status reach the log, for reading a
    // failed run (a start's first lines can still be missed: its inspector attaches late).
    logLevel: "log" as const,
    env: { WRANGLER_LOG_PATH: `${options.dir}/wrangler-debug` },
  };
  let dev: WranglerDev | undefined = await startWranglerDev(devOptions);
  let upSince = Date.now();
  let restarting: Promise<void> | null = null;
  const kills: KillRecord[] = [];
  const logSize = async () => (await Deno.stat(devOptions.logFile).catch(() => null))?.size ?? 0;

  const runtime: ChaosRuntime = {
    url: `http://127.0.0.1:${devOptions.port}`,
    kills,
    up: () => restarting ?? Promise.resolve(),
    killAndRestart(reason) {
      // A kill asked for during a restart waits for it: two kills never overlap.
      const previous = restarting ?? Promise.resolve();
      const next = previous.then(async () => {
        await dev?.kill();
        dev = undefined;
        const at = Date.now();
        const clock = options.clock();
        await new Promise((r) => setTimeout(r, options.pause()));
        kills.push({ at, reason, logOffset: await logSize() });
        options.log(
          `killed the runtime's process group (${kills.length}, ${reason}) at ${
            clock.toFixed(1)
          } s`,
        );
        dev = await startWranglerDev(devOptions);
        upSince = Date.now();
        options.log("restarted on the same state");
      });
      const tracked: Promise<void> = next.finally(() => {
        if (restarting === tracked) restarting = null;
      });
      restarting = tracked;
      return tracked;
    },
    async logSegments() {
      const text = await Deno.readFile(devOptions.logFile).catch(() => new Uint8Array());
      const bounds = [0, ...kills.map((k) => k.logOffset), text.length];
      const decoder = new TextDecoder();
      return bounds.slice(0, -1).map((start, i) =>
        decoder.decode(text.subarray(start, bounds[i + 1]))
      );
    },
    upSince: () => upSince,
    workerdRssKiB: () => (dev ? groupRssKiB(dev.pid, "workerd") : null),
    async stop() {
      if (restarting) await restarting.catch(() => {});
      await dev?.stop();
      dev = undefined;
    },
  };
  return runtime;
}

/**
 * Bundles baton once (as the tests do) into `dir` with a copy of its wrangler.toml pointing at the
 * bundle: the whole run, restarts included, runs the build it started with, whatever happens to
 * the working tree meanwhile. Returns the config's path.
 */
async function _freezeBuild(root: string, dir: string): Promise<string> {
  const base = root.replace(/\/?$/, "/");
  await bundleWorker(`${base}functions/index.ts`, `${dir}/build/index.js`);
  const toml = await Deno.readTextFile(`${base}wrangler.toml`);
  const config = `${dir}/wrangler.toml`;
  // The Worker alone: the console's build step and static assets (relative to the checkout) stay
  // out; the copy lives elsewhere, so the migrations are named where they are.
  const worker = toml.replace(/^main\s*=.*$/m, `main = "build/index.js"`)
    .replace(/^\[(?:build|assets)\]\n(?:(?!\[).*\n?)*/gm, "")
    .replace(/^migrations_dir\s*=.*$/m, `migrations_dir = "${base}migrations"`)
    // bundleWorker writes pdf.js beside the bundle: the additional modules are found there.
    .replace(/^base_dir\s*=.*$/m, `base_dir = "build"`);
  await Deno.writeTextFile(config, worker);
  return config;
}

/** Sum of VmRSS (KiB) of the processes named `name` in process group `pgid`; null when none. */
export function groupRssKiB(pgid: number, name: string): number | null {
  let total = 0;
  let found = false;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      // "pid (comm) state ppid pgrp …": comm may hold spaces, so split after its closing paren.
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const pgrp = Number(stat.slice(close + 2).split(" ")[2]);
      if (pgrp !== pgid || !comm.startsWith(name)) continue;
      const rss = /VmRSS:\s+(\d+)\s+kB/.exec(Deno.readTextFileSync(`/proc/${entry.name}/status`));
      if (rss) {
        total += Number(rss[1]);
        found = true;
      }
    } catch {
      // The process ended while being read.
    }
  }
  return found ? total : null;
}

// Bench Workers: bundles an entry with esbuild into a given file and runs it in workerd via Miniflare; Deno.
import * as esbuild from "esbuild";
import { Miniflare } from "miniflare";
import { workerdPids } from "./_bench_proc.ts";

const _root = new URL("../", import.meta.url);

/** The project root as a filesystem path, with a trailing slash. */
export const ROOT = _root.pathname;

/**
 * Bundles `entry` (a path relative to the project root) into `outfile` (also relative) with the
 * options of the test harness (test/_support/worker.ts), so the bench runs what the tests run.
 * Bare imports also resolve from this checkout's node_modules, which lets a baseline checkout
 * without its own node_modules bundle. Returns the absolute path of `outfile`.
 */
export async function bundleWorker(entry: string, outfile: string): Promise<string> {
  const out = new URL(outfile, _root).pathname;
  try {
    await esbuild.build({
      entryPoints: [new URL(entry, _root).pathname],
      outfile: out,
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      external: ["node:*", "cloudflare:*"],
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["module", "main"],
      nodePaths: [new URL("node_modules", _root).pathname],
      logLevel: "silent",
    });
  } finally {
    // esbuild's service process would otherwise keep Deno alive after the run.
    await esbuild.stop();
  }
  return out;
}

/** A bundled Worker running in its own workerd process. */
export interface BenchWorker {
  /** Miniflare's ready URL, e.g. "http://127.0.0.1:PORT/". */
  url: string;
  /** The workerd processes that run this Worker (for CPU and memory readings; empty off Linux). */
  pids: number[];
  /** Plain HTTP `fetch()` against `url + path`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Stops workerd; idempotent. */
  dispose(): Promise<void>;
}

/**
 * Starts the bundle at `scriptPath` in a new workerd with `vars` as string bindings; with
 * `sessions`, SESSIONS is bound to its `SessionDO` class on SQLite storage (as the tests do).
 */
export async function startBundled(
  scriptPath: string,
  opts: { vars: Record<string, string>; sessions: boolean },
): Promise<BenchWorker> {
  const before = await workerdPids();
  const mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: ROOT,
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: opts.sessions
      ? { SESSIONS: { className: "SessionDO", useSQLite: true } }
      : undefined,
    bindings: opts.vars,
    cf: false,
    port: 0,
    host: "127.0.0.1",
  });
  let url: string;
  try {
    url = (await mf.ready).href;
  } catch (e) {
    await mf.dispose();
    throw e;
  }
  const pids = (await workerdPids()).filter((pid) => !before.includes(pid));
  let disposed: Promise<void> | undefined;
  return {
    url,
    pids,
    fetch: (path, init) => fetch(new URL(path.replace(/^\//, ""), url), init),
    // A second mf.dispose() throws "Server is not running." asynchronously.
    dispose: () => disposed ??= mf.dispose(),
  };
}

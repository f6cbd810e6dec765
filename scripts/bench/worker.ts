// Bench Workers: the test harness's bundler and workerd starter, with the workerd pids for CPU and memory readings; Deno.
import {
  bundleWorker,
  startMiniflare,
  wranglerBundle,
  wranglerDryRun,
} from "../../test/_support/worker.ts";
import { workerdPids } from "./proc.ts";

export { bundleWorker, wranglerBundle, wranglerDryRun };

const _root = new URL("../../", import.meta.url);

/** The project root as a filesystem path, with a trailing slash. */
export const ROOT = _root.pathname;

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
 * Starts the bundle at `scriptPath` in a new workerd with `vars` as string bindings and
 * `durableObjects` (binding → exported class, on SQLite storage), and with `media` the `MEDIA` R2
 * bucket, as the tests do.
 */
export async function startBundled(
  scriptPath: string,
  opts: {
    vars: Record<string, string>;
    durableObjects?: Record<string, string>;
    media?: boolean;
    /** workerd's V8 inspector port, for CPU profiles (see profile.ts). */
    inspectorPort?: number;
  },
): Promise<BenchWorker> {
  const before = await workerdPids();
  const { mf, url } = await startMiniflare(scriptPath, opts);
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

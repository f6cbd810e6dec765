// Miniflare harness: bundles the Worker with esbuild once per process and runs it in workerd; Deno.
import * as esbuild from "esbuild";
import { Miniflare } from "miniflare";
import { buildConsole } from "../../scripts/build_console.ts";

const _root = new URL("../../", import.meta.url);
const _builds = new Map<string, Promise<string>>();
let _esbuildQueue: Promise<unknown> = Promise.resolve();

/**
 * Bundles `entry` (relative to the project root) once per process into
 * `.tmp/test-build/<entry basename>.js` and returns that absolute path.
 */
export function buildWorker(entry = "functions/index.ts"): Promise<string> {
  let build = _builds.get(entry);
  if (!build) {
    // Serialised: each build stops esbuild's child process, which a concurrent build would lose.
    build = _esbuildQueue.then(() => _build(entry));
    _esbuildQueue = build.catch(() => {});
    _builds.set(entry, build);
    build.catch(() => _builds.delete(entry));
  }
  return build;
}

let _console: Promise<string> | undefined;

/**
 * Builds the web console once per process into `.tmp/test-build/console/` (as wrangler's
 * `[build]` does into `.console/`) and returns that absolute path: the static assets every test
 * Worker serves. Queued with the Worker builds: both use esbuild's one service process.
 */
export function buildConsoleAssets(): Promise<string> {
  if (!_console) {
    const build = _esbuildQueue.then(() => buildConsole(".tmp/test-build/console"));
    _esbuildQueue = build.catch(() => {});
    _console = build;
    build.catch(() => _console = undefined);
  }
  return _console;
}

function _build(entry: string): Promise<string> {
  const name = entry.split("/").pop()!.replace(/\.[cm]?[jt]sx?$/, "");
  return bundleWorker(entry, `.tmp/test-build/${name}.js`);
}

/**
 * Bundles `entry` into `outfile` (both relative to the project root) as the tests and the bench
 * run it. Bare imports also resolve from this checkout's node_modules, so another checkout (the
 * bench's baseline) bundles without its own. Returns the absolute path of `outfile`.
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

/**
 * Starts a bundled Worker in a new workerd: `vars` as string bindings, `durableObjects` as
 * binding → exported class on SQLite storage, kept on disk in `persistDir` when given. With
 * `assets` (a directory), its files are served first and every other request reaches the Worker,
 * as wrangler.toml's `[assets]` has it.
 */
export async function startMiniflare(
  scriptPath: string,
  opts: {
    vars?: Record<string, string>;
    durableObjects?: Record<string, string>;
    persistDir?: string;
    assets?: string;
  },
): Promise<{ mf: Miniflare; url: string }> {
  const mf = new Miniflare({
    ...(opts.assets
      ? {
        assets: {
          directory: opts.assets,
          routerConfig: { has_user_worker: true },
          assetConfig: { html_handling: "auto-trailing-slash", not_found_handling: "none" },
        },
      }
      : {}),
    modules: true,
    scriptPath,
    modulesRoot: _root.pathname,
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: Object.fromEntries(
      Object.entries(opts.durableObjects ?? {}).map((
        [binding, className],
      ) => [binding, { className, useSQLite: true }]),
    ),
    bindings: opts.vars ?? {},
    cf: false,
    durableObjectsPersist: opts.persistDir ?? false,
    port: 0,
    host: "127.0.0.1",
  });
  try {
    return { mf, url: (await mf.ready).href };
  } catch (e) {
    await mf.dispose();
    throw e;
  }
}

/** A Worker running in workerd via Miniflare. */
export interface TestWorker {
  mf: Miniflare;
  /** Miniflare's ready URL, e.g. "http://127.0.0.1:PORT/". */
  url: string;
  /** Plain HTTP `fetch()` against `url + path`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Stops workerd; idempotent, call in `finally`. */
  dispose(): Promise<void>;
}

/**
 * Starts the bundled Worker (default `functions/index.ts`) in workerd. `vars` become string
 * bindings; with `persistDir`, Durable Object storage lives on disk there, so a second start on
 * the same dir simulates a restart.
 */
export async function startWorker(
  opts: { vars?: Record<string, string>; persistDir?: string; entry?: string } = {},
): Promise<TestWorker> {
  const scriptPath = await buildWorker(opts.entry);
  const entry = opts.entry ?? "functions/index.ts";
  const assets = entry === "functions/index.ts" ? await buildConsoleAssets() : undefined;
  const { mf, url } = await startMiniflare(scriptPath, {
    assets,
    vars: opts.vars,
    durableObjects: { SESSIONS: "SessionDO", ACCESS: "AccessDO" },
    persistDir: opts.persistDir,
  });
  let disposed: Promise<void> | undefined;
  return {
    mf,
    url,
    fetch: (path, init) => fetch(new URL(path.replace(/^\//, ""), url), init),
    // Idempotent: a second mf.dispose() throws "Server is not running." asynchronously.
    dispose: () => disposed ??= mf.dispose(),
  };
}

/** Creates a unique temp dir under `.tmp/` for persisted state; `cleanup()` removes it. */
export async function tempPersistDir(): Promise<{ path: string; cleanup(): Promise<void> }> {
  const base = new URL(".tmp/", _root).pathname;
  await Deno.mkdir(base, { recursive: true });
  const path = await Deno.makeTempDir({ dir: base, prefix: "persist-" });
  return { path, cleanup: () => Deno.remove(path, { recursive: true }).catch(() => {}) };
}

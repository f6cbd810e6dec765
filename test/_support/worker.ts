// Miniflare harness: bundles the Worker with esbuild once per process and runs it in workerd; Deno.
import * as esbuild from "esbuild";
import type { Readable } from "node:stream";
import { Log, LogLevel, Miniflare } from "miniflare";
import { buildConsole } from "../../scripts/build_console.ts";
import { pdfjsExternal, writePdfjsModule } from "../../scripts/pdfjs_module.ts";

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
 * bench's baseline) bundles without its own. pdf.js is written beside it as `pdfjs.mjs`, the
 * module of its own the bundle imports (scripts/pdfjs_module.ts). Returns the absolute path of
 * `outfile`.
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
      // pdf.js stays a module of its own beside the bundle, as wrangler uploads it.
      plugins: [pdfjsExternal()],
      logLevel: "silent",
    });
    await writePdfjsModule(out.slice(0, out.lastIndexOf("/")));
  } finally {
    // esbuild's service process would otherwise keep Deno alive after the run.
    await esbuild.stop();
  }
  return out;
}

/**
 * Bundles the Worker of the wrangler project in `cwd` (its wrangler.toml) as `wrangler deploy
 * --dry-run` does, with this repo's wrangler and no network, into `outdir`; returns the path of
 * its `index.js`. Throws with wrangler's output when it fails.
 */
export async function wranglerBundle(cwd: string, outdir: string): Promise<string> {
  await wranglerDryRun(cwd, ["--outdir", outdir]);
  return `${outdir.replace(/\/+$/, "")}/index.js`;
}

/**
 * Runs `wrangler deploy --dry-run` with `args` (where to write: `--outdir`, `--outfile`) on the
 * wrangler project in `cwd`, with this repo's wrangler and no network. Throws with wrangler's
 * output when it fails.
 */
export async function wranglerDryRun(cwd: string, args: string[]): Promise<void> {
  const run = await new Deno.Command(new URL("node_modules/.bin/wrangler", _root).pathname, {
    args: ["deploy", "--dry-run", ...args],
    cwd,
    env: {
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_HIDE_BANNER: "true",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!run.success) {
    const text = new TextDecoder();
    throw new Error(
      `wrangler deploy --dry-run failed: ${text.decode(run.stdout)}${text.decode(run.stderr)}`,
    );
  }
}

/** How a Worker gets its session directory: D1 with the migrations applied, D1 without them (every query fails), or no binding. */
export type DirectoryMode = "migrated" | "unmigrated" | "none";

/**
 * Starts a bundled Worker in a new workerd: `vars` as string bindings, `durableObjects` as
 * binding → exported class on SQLite storage, the `DIRECTORY` D1 database (`directory`, default
 * migrated), all kept on disk in `persistDir` when given. With `assets` (a directory), every
 * request reaches the Worker first, which reads those files through its `ASSETS` binding, as
 * wrangler.toml's `[assets]` has it. `onOutput` receives everything workerd writes (the Worker's log lines); without it the
 * output goes to stderr when BATON_TEST_LOGS is set.
 */
export async function startMiniflare(
  scriptPath: string,
  opts: {
    vars?: Record<string, string>;
    durableObjects?: Record<string, string>;
    persistDir?: string;
    assets?: string;
    directory?: DirectoryMode;
    onOutput?: (text: string) => void;
    /** Bind the `MEDIA` R2 bucket (as wrangler.toml's `[[r2_buckets]]`); default none. */
    media?: boolean;
    /**
     * Bind `EMAIL_OUT` (`[[send_email]]`) and open `/cdn-cgi/handler/email`; each mail the Worker
     * sends is handed, raw, to `onMail`.
     */
    onMail?: (raw: string) => void;
    /** Open workerd's V8 inspector (CDP) on this port, for CPU profiles (scripts/bench/profile.ts). */
    inspectorPort?: number;
  },
): Promise<{ mf: Miniflare; url: string }> {
  const directory = opts.directory ?? "migrated";
  const show = Deno.env.get("BATON_TEST_LOGS") !== undefined;
  // Until the Worker is up, its output is kept to explain a failed start.
  let startup: string[] | null = [];
  const output = (text: string) => {
    startup?.push(text);
    opts.onOutput?.(text);
    if (show) Deno.stderr.writeSync(new TextEncoder().encode(text));
  };
  const mf = new Miniflare({
    ...(opts.assets
      ? {
        assets: {
          directory: opts.assets,
          binding: "ASSETS",
          routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
          assetConfig: { html_handling: "none", not_found_handling: "none" },
        },
      }
      : {}),
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      for (const stream of [stdout, stderr]) {
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => output(chunk));
      }
    },
    ...(directory === "none" ? {} : { d1Databases: { DIRECTORY: "baton-directory" } }),
    d1Persist: opts.persistDir ? `${opts.persistDir}/d1` : false,
    ...(opts.media ? { r2Buckets: { MEDIA: "baton-media" } } : {}),
    ...(opts.onMail
      ? {
        email: { send_email: [{ name: "EMAIL_OUT" }] },
        unsafeTriggerHandlers: true,
        log: new _MailLog(opts.onMail),
      }
      : {}),
    r2Persist: opts.persistDir ? `${opts.persistDir}/r2` : false,
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
    ...(opts.inspectorPort ? { inspectorPort: opts.inspectorPort } : {}),
  });
  try {
    const url = (await mf.ready).href;
    if (directory === "migrated") await migrateDirectory(mf);
    startup = null;
    return { mf, url };
  } catch (e) {
    await mf.dispose();
    if (startup?.length && !show) console.error(startup.join(""));
    throw e;
  }
}

/**
 * Miniflare's log, kept for one thing: its local `send_email` binding stores each mail it is
 * given in a file and logs the file's path; the mail is read from there and handed on.
 */
class _MailLog extends Log {
  constructor(readonly onMail: (raw: string) => void) {
    super(LogLevel.INFO);
  }
  override logWithLevel(_level: LogLevel, message: string): void {
    const path = /send_email binding called with the following message:\s+(\S+\.eml)/.exec(message);
    if (path) this.onMail(Deno.readTextFileSync(path[1]));
  }
}

/**
 * Applies `migrations/*.sql`, in name order, to the Worker's `DIRECTORY` database (as
 * `wrangler d1 migrations apply` does; they are idempotent, so a restart may apply them again).
 */
export async function migrateDirectory(mf: Miniflare): Promise<void> {
  const db = await mf.getD1Database("DIRECTORY");
  const dir = new URL("migrations/", _root);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".sql"))
    .sort();
  for (const name of names) {
    const sql = Deno.readTextFileSync(new URL(name, dir));
    const statements = sql.split("\n").filter((line) => !line.trim().startsWith("--")).join("\n")
      .split(/;\s*(?:\n|$)/).map((s) => s.trim()).filter(Boolean);
    await db.batch(statements.map((statement) => db.prepare(statement)));
  }
}

/** A Worker running in workerd via Miniflare. */
export interface TestWorker {
  mf: Miniflare;
  /** Miniflare's ready URL, e.g. "http://127.0.0.1:PORT/". */
  url: string;
  /** Plain HTTP `fetch()` against `url + path`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Everything the Worker has written so far (its JSON log lines, workerd's own messages). */
  output(): string;
  /** The raw mails the Worker has sent through `EMAIL_OUT` (started with `email`), oldest first. */
  mails(): string[];
  /**
   * Stops workerd, then fails (rejects) when any secret the test configured appears in the
   * Worker's output (see `secretValues`); idempotent, call in `finally`.
   */
  dispose(): Promise<void>;
}

// Vars whose values are secrets: none of them may ever appear in a log line.
const _SECRET_VAR = /(_TOKEN|_SECRET|_KEY|_KEYS|_PASSWORD|_SERVICE_ACCOUNT)$|^WEBHOOK_SECRET$/;
// Named like a secret, but lists tenant names, or a public key.
const _NOT_SECRET_VAR = new Set(["ADMIN_API_KEYS", "DISCORD_PUBLIC_KEY"]);

/**
 * The secret values among `vars` (names like *_TOKEN, *_SECRET, *_KEY(S), *_PASSWORD,
 * *_SERVICE_ACCOUNT): each whole value, a key JSON's private key (whole and each line), each key of a `name:key` list (GATEWAY_API_KEYS) and the part of a bot token after its
 * colon. Values under 8 characters are skipped: they would match ordinary text.
 */
export function secretValues(vars: Record<string, string>): string[] {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(vars)) {
    if (!_SECRET_VAR.test(name) || _NOT_SECRET_VAR.has(name)) continue;
    found.add(value);
    // A service-account key JSON: its private key, whole and line by line, is the secret (its
    // other fields, such as the client email, are not).
    const privateKey = _privateKey(value);
    if (privateKey) {
      found.add(privateKey);
      for (const line of privateKey.split("\n")) found.add(line.trim());
      continue;
    }
    for (const entry of value.split(",")) {
      found.add(entry.trim());
      found.add(entry.slice(entry.indexOf(":") + 1).trim());
    }
  }
  return [...found].filter((v) => v.length >= 8);
}

/** The `private_key` of a key JSON (without its PEM armour lines), or "" when `value` is not one. */
function _privateKey(value: string): string {
  try {
    const key = JSON.parse(value)?.private_key;
    return typeof key === "string" ? key.replace(/-----[A-Z ]+-----/g, "").trim() : "";
  } catch {
    return "";
  }
}

/** The secrets of `secrets` that appear in `output`, each shown by its first 4 characters only. */
export function leakedSecrets(output: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => output.includes(secret)).map((s) => `${s.slice(0, 4)}…`);
}

/**
 * Starts the bundled Worker (default `functions/index.ts`) in workerd. `vars` become string
 * bindings; with `persistDir`, Durable Object storage lives on disk there, so a second start on
 * the same dir simulates a restart. Its output is kept, and `dispose()` checks it for secrets.
 */
export async function startWorker(
  opts: {
    vars?: Record<string, string>;
    persistDir?: string;
    entry?: string;
    directory?: DirectoryMode;
    /** Bind the `MEDIA` R2 bucket; default none. */
    media?: boolean;
    /** Bind `EMAIL_OUT` and open the email handler (see `TestWorker.mails`); default none. */
    email?: boolean;
    /** More Durable Object bindings (binding → class), beside baton's four: a second deployment's. */
    durableObjects?: Record<string, string>;
  } = {},
): Promise<TestWorker> {
  const scriptPath = await buildWorker(opts.entry);
  const entry = opts.entry ?? "functions/index.ts";
  const assets = entry === "functions/index.ts" ? await buildConsoleAssets() : undefined;
  const chunks: string[] = [];
  const mails: string[] = [];
  const { mf, url } = await startMiniflare(scriptPath, {
    assets,
    vars: opts.vars,
    durableObjects: {
      SESSIONS: "SessionDO",
      ACCESS: "AccessDO",
      CONVERSATIONS: "ConversationPointerDO",
      IDEMPOTENCY_KEYS: "IdempotencyKeyDO",
      ...opts.durableObjects,
    },
    persistDir: opts.persistDir,
    directory: opts.directory,
    media: opts.media,
    onOutput: (text) => chunks.push(text),
    ...(opts.email ? { onMail: (raw: string) => mails.push(raw) } : {}),
  });
  const secrets = secretValues(opts.vars ?? {});
  let disposed: Promise<void> | undefined;
  const dispose = async () => {
    await mf.dispose();
    // The last lines may still be in the pipe when workerd exits.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const leaked = leakedSecrets(chunks.join(""), secrets);
    if (leaked.length) {
      throw new Error(`the Worker's output contains configured secrets: ${leaked.join(", ")}`);
    }
  };
  return {
    mf,
    url,
    fetch: (path, init) => fetch(new URL(path.replace(/^\//, ""), url), init),
    output: () => chunks.join(""),
    mails: () => [...mails],
    // Idempotent: a second mf.dispose() throws "Server is not running." asynchronously.
    dispose: () => disposed ??= dispose(),
  };
}

/** Creates a unique temp dir under `.tmp/` for persisted state; `cleanup()` removes it. */
export async function tempPersistDir(): Promise<{ path: string; cleanup(): Promise<void> }> {
  const base = new URL(".tmp/", _root).pathname;
  await Deno.mkdir(base, { recursive: true });
  const path = await Deno.makeTempDir({ dir: base, prefix: "persist-" });
  return { path, cleanup: () => Deno.remove(path, { recursive: true }).catch(() => {}) };
}

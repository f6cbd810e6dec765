// `wrangler dev` as a killable child: its own process group, persisted state, offline; Deno.

const _root = new URL("../", import.meta.url);

/** wrangler's switches that stop every call home (see ../shared/reference/toolchain.md §3). */
export const WRANGLER_OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
} as const;

/** A running `wrangler dev`; `kill()` ends its whole process group at once (SIGKILL). */
export interface WranglerDev {
  /** e.g. "http://127.0.0.1:PORT" */
  url: string;
  pid: number;
  /** SIGKILL to the process group (wrangler, esbuild, workerd), then waits for the leader. */
  kill(): Promise<void>;
  /** SIGTERM to wrangler (it flushes its log and stops workerd), SIGKILL to the group after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Settings of a `wrangler dev` run that survive restarts. */
export interface WranglerDevOptions {
  port: number;
  inspectorPort: number;
  /** `--persist-to`: Durable Object storage and alarms live here across restarts. */
  persistDir: string;
  vars: Record<string, string>;
  /** Appended to by every start. */
  logFile: string;
  /** How long to wait for /healthz (default 60 s). */
  readyTimeoutMs?: number;
  /** The checkout to run (default this one), e.g. a build under comparison; needs node_modules. */
  root?: string;
  /**
   * A wrangler.toml of its own whose `main` is a bundle made beforehand: run with --no-bundle,
   * so every start runs the same build and edits to the sources never reload it mid-run.
   */
  config?: string;
  /** More environment for wrangler (e.g. WRANGLER_LOG_PATH). */
  env?: Record<string, string>;
  /** wrangler's --log-level (default "warn"); at "warn" the worker's console.warn is not shown. */
  logLevel?: "debug" | "info" | "log" | "warn" | "error";
}

/** Kills of the process groups still running, so an interrupted caller leaves none behind. */
const _running = new Set<() => void>();

/** SIGKILLs every `wrangler dev` this process started and has not stopped yet; synchronous. */
export function killAllWranglerDevs(): void {
  for (const kill of _running) kill();
}

/** A free TCP port on 127.0.0.1 (the OS picks it; it is released before returning). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Applies the D1 migrations (the session directory) to `persistDir`'s local database, as
 * `npm start` does before `wrangler dev`; once per dir (a marker file), so restarts cost nothing.
 * A checkout without migrations (an older baseline) is left as it is.
 */
export async function migrateLocalDirectory(
  options: Pick<WranglerDevOptions, "persistDir" | "root" | "config" | "logFile" | "env">,
): Promise<void> {
  const root = options.root ? new URL(`file://${options.root.replace(/\/?$/, "/")}`) : _root;
  const marker = `${options.persistDir}/.directory-migrated`;
  const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
  if (await exists(marker) || !await exists(new URL("migrations", root).pathname)) return;
  const wrangler = new URL("node_modules/.bin/wrangler", root).pathname;
  const args = [
    "d1",
    "migrations",
    "apply",
    "DIRECTORY",
    "--local",
    "--persist-to",
    options.persistDir,
  ];
  if (options.config) args.push("--config", options.config);
  const log = await Deno.open(options.logFile, { append: true, create: true });
  try {
    const { code } = await new Deno.Command(wrangler, {
      args,
      cwd: root.pathname,
      env: { ...WRANGLER_OFFLINE_ENV, ...options.env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output().then(async (out) => {
      await log.write(out.stdout);
      await log.write(out.stderr);
      return out;
    });
    if (code !== 0) throw new Error(`wrangler d1 migrations apply failed; see ${options.logFile}`);
  } finally {
    log.close();
  }
  await Deno.mkdir(options.persistDir, { recursive: true });
  await Deno.writeTextFile(marker, new Date().toISOString());
}

/**
 * Starts `wrangler dev` in a new session (setsid) and waits until /healthz answers 200; the
 * session directory's migrations are applied to `persistDir` first.
 */
export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  const root = options.root ? new URL(`file://${options.root.replace(/\/?$/, "/")}`) : _root;
  const wrangler = new URL("node_modules/.bin/wrangler", root).pathname;
  await migrateLocalDirectory(options);
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(options.port),
    "--inspector-port",
    String(options.inspectorPort),
    "--persist-to",
    options.persistDir,
    "--show-interactive-dev-session=false",
    "--log-level",
    options.logLevel ?? "warn",
  ];
  if (options.config) args.push("--config", options.config, "--no-bundle");
  for (const [name, value] of Object.entries(options.vars)) args.push("--var", `${name}:${value}`);
  // setsid makes wrangler the leader of a new process group, so one kill reaches workerd too.
  const child = new Deno.Command("setsid", {
    args: ["sh", "-c", `exec "$0" "$@" >>"${options.logFile}" 2>&1`, wrangler, ...args],
    cwd: root.pathname,
    env: { ...WRANGLER_OFFLINE_ENV, ...options.env },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${options.port}`;
  let status: Deno.CommandStatus | undefined;
  const exited = child.status.then((s) => status = s);
  const killGroup = () => {
    _running.delete(killGroup);
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  _running.add(killGroup);
  const kill = async () => {
    if (!status) killGroup();
    await exited;
  };
  const stop = async (graceMs = 5_000) => {
    if (!status) {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
    }
    // workerd may outlive wrangler by a moment: the group goes either way.
    killGroup();
    await exited;
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (status) {
      throw new Error(
        `wrangler dev exited with ${status.code} before it was ready; see ${options.logFile}`,
      );
    }
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.status === 200) return { url, pid: child.pid, kill, stop };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await kill();
      throw new Error(`wrangler dev was not ready after ${options.readyTimeoutMs ?? 60_000} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

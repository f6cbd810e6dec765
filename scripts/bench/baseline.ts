// Bench baseline: bundles another git ref's Worker from a temporary worktree, removed at once; Deno.
import { bundleWorker, ROOT, wranglerDryRun } from "./worker.ts";

const _WORKTREE = ".tmp/bench-baseline";

/** A baseline build: which ref and commit, and its bundled Worker. */
export interface BaselineBuild {
  ref: string;
  commit: string;
  /** The commit's subject line, for the report. */
  subject: string;
  scriptPath: string;
  /**
   * Its upload as `wrangler deploy --dry-run --outfile` writes it (the start-up phase profiles it
   * beside the working tree's); absent when the ref's wrangler project would not build.
   */
  uploadPath?: string;
}

async function _git(args: string[], allowFailure = false): Promise<string> {
  const out = await new Deno.Command("git", {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success && !allowFailure) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return text;
}

/** Removes the worktree and git's record of it; quiet when there is none. */
async function _removeWorktree(): Promise<void> {
  await _git(["worktree", "remove", "--force", _WORKTREE], true);
  await Deno.remove(new URL(_WORKTREE, `file://${ROOT}`), { recursive: true }).catch(() => {});
  await _git(["worktree", "prune"], true);
}

/**
 * Checks `ref` out into `.tmp/bench-baseline` (a detached worktree), bundles its
 * `functions/index.ts` into `.tmp/bench-build/baseline/index.js` with this checkout's
 * node_modules, and removes the worktree again before returning, also on failure: the bundle is
 * all the run needs. A worktree left by a killed run is removed first.
 */
export async function buildBaseline(ref: string): Promise<BaselineBuild> {
  const commit = await _git(["rev-parse", "--verify", "--end-of-options", `${ref}^{commit}`]);
  const subject = await _git(["log", "-1", "--format=%s", commit]);
  await _removeWorktree();
  // Ctrl-C would skip the finally below: remove the worktree, then exit as interrupted.
  const interrupted = () => _removeWorktree().finally(() => Deno.exit(130));
  Deno.addSignalListener("SIGINT", interrupted);
  try {
    await _git(["worktree", "add", "--detach", _WORKTREE, commit]);
    const scriptPath = await bundleWorker(
      `${_WORKTREE}/functions/index.ts`,
      ".tmp/bench-build/baseline/index.js",
    );
    const uploadPath = await _upload();
    return { ref, commit, subject, scriptPath, ...(uploadPath ? { uploadPath } : {}) };
  } finally {
    await _removeWorktree();
    Deno.removeSignalListener("SIGINT", interrupted);
  }
}

/**
 * The worktree's upload, built by this checkout's wrangler with the worktree's wrangler.toml (its
 * node_modules this checkout's), into `.tmp/bench-build/baseline/worker.bundle`; its path, or
 * undefined (said on stderr) when wrangler fails.
 */
async function _upload(): Promise<string | undefined> {
  const worktree = `${ROOT}${_WORKTREE}`;
  await Deno.symlink(`${ROOT}node_modules`, `${worktree}/node_modules`, { type: "dir" });
  const out = `${ROOT}.tmp/bench-build/baseline/worker.bundle`;
  try {
    await wranglerDryRun(worktree, ["--outfile", out]);
    return out;
  } catch {
    console.error(`baseline: wrangler deploy --dry-run failed; start-up is not profiled for it`);
    return undefined;
  }
}

/**
 * The baseline ref from `--baseline <ref>` or `--baseline=<ref>`, else `BENCH_BASELINE`, else
 * none. Throws on any other argument.
 */
export function baselineRef(args: string[]): string | undefined {
  let ref: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = args[i].startsWith("--baseline=")
      ? ["--baseline", args[i].slice(11)]
      : [args[i], args[i] === "--baseline" ? args[++i] : undefined];
    if (flag !== "--baseline") throw new Error(`unexpected argument ${JSON.stringify(flag)}`);
    if (!value || value.startsWith("-")) throw new Error("--baseline needs a git ref, e.g. HEAD");
    ref = value;
  }
  return ref ?? (Deno.env.get("BENCH_BASELINE") || undefined);
}

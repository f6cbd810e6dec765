// Bench CPU profiles of a running workerd: V8's sampling profiler over the inspector (CDP) and self time by function, file and package; Deno.
import { packageOf } from "./bundle_weights.ts";

/** A V8 `.cpuprofile` node, with the call-frame fields read here. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

/** The parts of a V8 `.cpuprofile` (CDP `Profiler.stop`) read here. */
export interface FullCpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One row of a self-time table. */
export interface SelfTime {
  /** `name (file:line)` for a function, a file path, or a package name. */
  key: string;
  ms: number;
  /** Its share of all sampled (non-idle) time. */
  share: number;
}

/** Self time of a profile, three ways. */
export interface SelfTimes {
  /** Every sample but `(idle)`, in ms. */
  busyMs: number;
  byFunction: SelfTime[];
  /** Bundled source file (`lib/session/turn_runner.ts`, `node_modules/zod/…`), or `(runtime)`. */
  byFile: SelfTime[];
  /** `lib`, `functions`, an npm package, or `(runtime)`: V8 and workerd themselves, `(garbage collector)`, `(program)`. */
  byPackage: SelfTime[];
}

/** esbuild's header above each bundled module of an unminified bundle: `// lib/session/inbox.ts`. */
const _MODULE_HEADER = /^\/\/ ((?:[\w@.-]+\/)+[\w@.-]+\.[cm]?[jt]sx?)$/;

/**
 * The source file of each line of an unminified esbuild bundle (0-based, as V8's `lineNumber`),
 * from the module header comments; lines before the first header map to `(bundle)`.
 */
export function bundleLineFiles(bundle: string): (line: number) => string {
  const starts: number[] = [];
  const files: string[] = [];
  for (const [i, line] of bundle.split("\n").entries()) {
    const m = _MODULE_HEADER.exec(line);
    if (m) {
      starts.push(i);
      files.push(m[1]);
    }
  }
  return (line) => {
    let lo = 0, hi = starts.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= line) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? "(bundle)" : files[found];
  };
}

/**
 * Self time of `profile` by function, by file and by package, heaviest first. Frames whose url
 * ends with `bundleName` are mapped to their source file with `fileOf`; any other frame (workerd's
 * own JS, V8 builtins, `(garbage collector)`, `(program)`) counts as `(runtime)`. A sample lasts
 * until the next one (the last until the profile's end), as in `profileTimes`.
 */
export function selfTimes(
  profile: FullCpuProfile,
  fileOf: (line: number) => string,
  bundleName: string,
): SelfTimes {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  let at = profile.startTime, busy = 0;
  const times = profile.timeDeltas.map((d) => at += d);
  for (const [i, id] of profile.samples.entries()) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame || frame.functionName === "(idle)") continue;
    const us = (i + 1 < times.length ? times[i + 1] : profile.endTime) - times[i];
    busy += us;
    const ours = bundleName !== "" && frame.url.endsWith(bundleName);
    const file = ours ? fileOf(frame.lineNumber) : "(runtime)";
    const pkg = ours ? packageOf(file) : "(runtime)";
    const name = frame.functionName || "(anonymous)";
    const where = ours ? `${file}:${frame.lineNumber + 1}` : frame.url || "native";
    add(byFunction, `${name} (${where})`, us);
    add(byFile, ours ? file : `(runtime) ${frame.url || name}`, us);
    add(byPackage, pkg, us);
  }
  const rows = (m: Map<string, number>) =>
    [...m].map(([key, us]) => ({ key, ms: us / 1000, share: busy ? us / busy : 0 }))
      .sort((a, b) => b.ms - a.ms);
  return {
    busyMs: busy / 1000,
    byFunction: rows(byFunction),
    byFile: rows(byFile),
    byPackage: rows(byPackage),
  };
}

/** A CDP session with one isolate of workerd over its inspector websocket. */
export class Inspector {
  #next = 1;
  readonly #pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data as string);
      if (typeof msg.id === "number") this.#pending.get(msg.id)?.(msg);
      this.#pending.delete(msg.id);
    };
  }

  /**
   * Connects to the inspector on `port` at the isolate named `worker` (Miniflare's user Worker:
   * `core:user:` + its name, `""` by default), as listed at `/json/list`.
   */
  static async connect(port: number, match: (title: string) => boolean): Promise<Inspector> {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
      title?: string;
      id?: string;
      webSocketDebuggerUrl?: string;
    }[];
    const target = list.find((t) => match(t.title ?? t.id ?? ""));
    if (!target?.webSocketDebuggerUrl) {
      throw new Error(`no inspector target among ${JSON.stringify(list.map((t) => t.title))}`);
    }
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = (e) => reject(new Error(`inspector websocket: ${(e as ErrorEvent).message}`));
    });
    return new Inspector(ws);
  }

  /** Sends one CDP command and resolves with its result (rejects with its error). */
  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(
        id,
        (msg) =>
          msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result as T),
      );
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Closes the websocket. */
  close(): void {
    this.ws.close();
  }
}

// Bench arithmetic on the deploy bundle: its weight per package, and the start-up CPU of a `wrangler check startup` profile; Deno.

/** One package's share of the bundle: its bytes as bundled, and those bytes gzipped on their own. */
export interface PackageWeight {
  /** The npm package (`zod`, `@modelcontextprotocol/sdk`), or `lib`/`functions` for baton's own code. */
  name: string;
  raw: number;
  gzip: number;
  /** Its modules in the bundle. */
  modules: number;
}

/** esbuild's header above each bundled module of an unminified bundle: `// node_modules/zod/v4/core/core.js`. */
const _MODULE_HEADER = /^\/\/ ((?:[\w@.-]+\/)+[\w@.-]+\.[cm]?[jt]sx?)$/gm;

/**
 * The weight of each package in an unminified esbuild bundle (what `wrangler deploy --dry-run`
 * writes), heaviest first: the text from each module's header comment to the next is that
 * module's, grouped by the package its path names. Each package is gzipped alone, so the gzip
 * figures add up to more than the bundle's (shared words compress once in the whole): they say
 * what a package adds, not an exact share.
 */
export async function packageWeights(bundle: string): Promise<PackageWeight[]> {
  const headers = [...bundle.matchAll(_MODULE_HEADER)];
  const texts = new Map<string, { parts: string[]; modules: number }>();
  for (const [i, header] of headers.entries()) {
    const end = i + 1 < headers.length ? headers[i + 1].index : bundle.length;
    const name = packageOf(header[1]);
    const entry = texts.get(name) ?? { parts: [], modules: 0 };
    entry.parts.push(bundle.slice(header.index, end));
    entry.modules++;
    texts.set(name, entry);
  }
  const weights: PackageWeight[] = [];
  for (const [name, { parts, modules }] of texts) {
    const bytes = new TextEncoder().encode(parts.join(""));
    weights.push({ name, raw: bytes.length, gzip: await gzipSize(bytes), modules });
  }
  return weights.sort((a, b) => b.raw - a.raw);
}

/** The package a bundled module's path belongs to: the innermost `node_modules/<name>`, else its top folder. */
export function packageOf(path: string): string {
  const at = path.lastIndexOf("node_modules/");
  if (at < 0) return path.split("/")[0];
  const parts = path.slice(at + "node_modules/".length).split("/");
  return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The size of `bytes` gzipped (the default level, as `wrangler deploy` reports it). */
export async function gzipSize(bytes: Uint8Array): Promise<number> {
  const gz = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(gz).arrayBuffer()).byteLength;
}

/** The parts of a V8 `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** What a start-up profile shows, in ms. */
export interface ProfileTimes {
  /**
   * The sampled CPU: every sample but `(idle)`, each lasting until the next, the last as long as
   * the median gap between samples. Not until the profile's end: `wrangler check startup` stops
   * the profiler ≈ 30 ms after the evaluation on these machines (an empty Worker's lone sample
   * lasted 26–50 ms that way), which counted as evaluation. A gap over `_STALL` medians is the
   * sampler stalled, not code running (an empty Worker, with nothing to run, showed 20–23 ms
   * gaps; a third of baton's cold starts one of 27–38 ms): it counts as one median gap.
   */
  sampledMs: number;
  /**
   * From the profile's start to its first sample. For `wrangler check startup`'s profile (one
   * dynamic import of the Worker) that is the request reaching workerd and then V8 compiling the
   * whole script, which takes no samples: it grows with the bundle's size, evaluated or not.
   */
  firstSampleMs: number;
}

/** A gap between two samples longer than this many median gaps is a stall (`ProfileTimes.sampledMs`). */
const _STALL = 5;

/** The sampled CPU and the time before the first sample of a V8 `.cpuprofile`. */
export function profileTimes(profile: CpuProfile): ProfileTimes {
  const names = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName]));
  let at = profile.startTime;
  const times = profile.timeDeltas.map((d) => at += d);
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
  const median = gaps.length ? gaps[gaps.length >> 1] : 0;
  let busy = 0;
  for (const [i, sample] of profile.samples.entries()) {
    if (names.get(sample) === "(idle)") continue;
    const gap = i + 1 < times.length ? times[i + 1] - times[i] : median;
    busy += gap > _STALL * median ? median : gap;
  }
  const first = times.length ? times[0] - profile.startTime : profile.endTime - profile.startTime;
  return { sampledMs: busy / 1000, firstSampleMs: first / 1000 };
}

/** The parts of an esbuild metafile read here (`wrangler deploy --metafile`, or esbuild's `metafile: true`). */
export interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { entryPoint?: string }>;
}

/**
 * The packages whose modules are evaluated when the bundle starts (see `packageOf`), sorted:
 * those reached from the entry point by static imports and `require` calls. A module reached
 * only through `import()` is not among them — esbuild bundles it as a function run on the first
 * import — so a package missing here costs start-up its parsing, not its evaluation.
 */
export function startupPackages(meta: Metafile): string[] {
  return [...new Set(startupModules(meta).map(packageOf))].sort();
}

/**
 * The input files evaluated when the bundle starts, as the metafile names them (relative to the
 * bundler's working directory), sorted: the entry points and what they reach by static imports and
 * `require` calls, not through `import()`.
 */
export function startupModules(meta: Metafile): string[] {
  const entries = Object.values(meta.outputs).flatMap((o) => o.entryPoint ? [o.entryPoint] : []);
  const seen = new Set<string>(entries);
  const queue = [...entries];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const edge of meta.inputs[file]?.imports ?? []) {
      if (edge.external || edge.kind === "dynamic-import" || seen.has(edge.path)) continue;
      seen.add(edge.path);
      queue.push(edge.path);
    }
  }
  return [...seen].sort();
}

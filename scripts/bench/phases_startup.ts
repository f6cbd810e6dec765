// Bench phase on start-up: the deploy bundle's weight per package, the modules uploaded beside it, which packages start-up evaluates, and `wrangler check startup`'s CPU, the default Worker's beside one without pdf.js (examples/my-agent); Deno.
import {
  type CpuProfile,
  gzipSize,
  type Metafile,
  packageWeights,
  type ProfileTimes,
  profileTimes,
  startupPackages,
} from "./bundle_weights.ts";
import { pct } from "./client.ts";
import { r1, r2, type Report } from "./report.ts";
import type { Rig } from "./rig.ts";
import { ROOT, wranglerDryRun } from "./worker.ts";

/** Profiles taken: each is one cold start, and a loaded machine stretches some of them. */
const _RUNS = 7;

const _ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

/** A Worker that does not read PDFs: baton as a library user builds it, no `pdf` option. */
const _NO_PDF_APP = `${ROOT}examples/my-agent`;

/** Runs the project's wrangler with `args` in `cwd` (default: the project root); throws with its output when it fails. */
async function _wrangler(args: string[], cwd = ROOT): Promise<void> {
  const run = await new Deno.Command(`${ROOT}node_modules/.bin/wrangler`, {
    args,
    cwd,
    env: _ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!run.success) {
    const text = new TextDecoder();
    throw new Error(
      `wrangler ${args[0]} failed: ${text.decode(run.stdout)}${text.decode(run.stderr)}`,
    );
  }
}

/** The modules of a `wrangler deploy --outfile` upload (a multipart form, as uploaded): the main one's text, and the others' bytes by name. */
async function _uploadModules(
  bundle: Uint8Array,
): Promise<{ main: string; others: Map<string, Uint8Array> }> {
  const boundary = new TextDecoder().decode(bundle.slice(2, bundle.indexOf(10))).trim();
  const form = await new Response(bundle as BlobPart, {
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  }).formData();
  const { main_module } = JSON.parse(String(form.get("metadata")));
  const others = new Map<string, Uint8Array>();
  for (const [name, part] of form) {
    if (name === "metadata" || name === main_module || typeof part === "string") continue;
    others.set(name, new Uint8Array(await part.arrayBuffer()));
  }
  return { main: await (form.get(main_module) as File).text(), others };
}

/**
 * Builds the upload `wrangler deploy` would send (with esbuild's metafile), names each package's
 * weight raw and gzipped and whether start-up evaluates it, then profiles the Worker's start-up
 * `_RUNS` times with `wrangler check startup` (workerd on this machine, offline): the time V8
 * compiles the script (which takes no samples) and the sampled CPU of evaluating it, min and median.
 * examples/my-agent's upload (baton without `pdf`: no pdf.js in it) is profiled in turn with it,
 * for what a Worker that does not read PDFs starts in, and so is the baseline's upload when the run
 * has one (`--baseline`): the same figures under `baseline_`, and the ratios current / baseline.
 */
export async function startupCost(rig: Rig, report: Report): Promise<void> {
  const dir = `${ROOT}.tmp/bench-startup`;
  await Deno.mkdir(dir, { recursive: true });
  await wranglerDryRun(ROOT, [
    "--outfile",
    `${dir}/worker.bundle`,
    "--metafile",
    `${dir}/meta.json`,
  ]);
  const meta: Metafile = JSON.parse(await Deno.readTextFile(`${dir}/meta.json`));
  const evaluated = new Set(startupPackages(meta));
  const upload = await _uploadModules(await Deno.readFile(`${dir}/worker.bundle`));
  const weights = await packageWeights(upload.main);
  const kb = (bytes: number) => r1(bytes / 1024);
  const rows = weights.map((w) =>
    `| ${w.name} | ${kb(w.raw)} | ${kb(w.gzip)} | ${w.modules} | ${
      evaluated.has(w.name) ? "yes" : "on first use"
    } |`
  );
  report.section(
    "deploy bundle by package (each gzipped alone)",
    [
      "| package | raw KB | gzip KB | modules | evaluated at start-up |",
      "|---|---:|---:|---:|---|",
      ...rows,
    ]
      .join("\n"),
  );
  // The modules uploaded beside index.js (wrangler.toml `base_dir`), weighed apart from it. They
  // are evaluated on their first import only, but workerd compiles every module of an upload when
  // the Worker starts, imported or not (cloudflare/workerd#2372; measured: pdfjs.mjs alone is
  // ~30 ms of the compile figure below), so they count in start-up all the same.
  const others = [...upload.others].sort(([a], [b]) => a.localeCompare(b));
  const otherRows = await Promise.all(
    others.map(async ([name, bytes]) =>
      `| ${name} | ${kb(bytes.length)} | ${kb(await gzipSize(bytes))} |`
    ),
  );
  report.section(
    "modules uploaded beside index.js (compiled at start-up, evaluated on first use)",
    ["| module | raw KB | gzip KB |", "|---|---:|---:|", ...otherRows].join("\n"),
  );
  report.figure(
    "modules beside index.js, raw (bytes)",
    "side_modules_raw_bytes",
    others.reduce((n, [, bytes]) => n + bytes.length, 0),
  );
  const atStart = weights.filter((w) => evaluated.has(w.name));
  const sum = (ws: typeof weights, key: "raw" | "gzip") => ws.reduce((n, w) => n + w[key], 0);
  report.figure(
    "bundle evaluated at start-up, raw (bytes)",
    "startup_eval_raw_bytes",
    sum(atStart, "raw"),
  );
  report.figure(
    "bundle evaluated at start-up, gzip (bytes)",
    "startup_eval_gzip_bytes",
    sum(atStart, "gzip"),
  );

  const noPdf = await _noPdfUpload(dir);
  report.figure(
    "examples/my-agent (no pdf.js) upload, all modules raw (bytes)",
    "nopdf_upload_raw_bytes",
    noPdf.bytes,
  );

  // An empty Worker, profiled in turn with baton: its time to the first sample is the harness's
  // (the request reaching workerd), taken off baton's to leave the compilation.
  await Deno.writeFile(`${dir}/empty.bundle`, await _emptyWorkerUpload());
  const baseline = rig.batons.find((b) => b.name === "baseline");
  const runs = { default: _times(), nopdf: _times(), baseline: _times() };
  for (let i = 0; i < _RUNS; i++) {
    const baton = await _profile(`${dir}/worker.bundle`, `${dir}/startup-${i}.cpuprofile`);
    const before = baseline?.uploadPath &&
      await _profile(baseline.uploadPath, `${dir}/baseline-${i}.cpuprofile`);
    const without = await _profile(noPdf.bundle, `${dir}/nopdf-${i}.cpuprofile`);
    const empty = await _profile(`${dir}/empty.bundle`, `${dir}/empty-${i}.cpuprofile`);
    runs.default.add(baton, empty);
    if (before) runs.baseline.add(before, empty);
    runs.nopdf.add(without, empty);
  }
  const builds: [Report, string, string, ReturnType<typeof _times>][] = [
    [report, "start-up", "startup", runs.default],
    [report, "start-up without pdf.js (examples/my-agent)", "startup_nopdf", runs.nopdf],
  ];
  if (baseline && runs.baseline.total.length) {
    builds.push([baseline.report, "start-up", "startup", runs.baseline]);
    for (const [what, key] of [["evaluation", "evaluated"], ["compile", "compile"]] as const) {
      report.figure(
        `start-up ${what} p50 ratio current / baseline`,
        `startup_${key === "evaluated" ? "eval" : key}_ratio`,
        r2(pct([...runs.default[key]], 0.5) / pct([...runs.baseline[key]], 0.5)),
      );
    }
  }
  for (const [into, who, prefix, times] of builds) {
    for (
      const [what, key, values] of [
        ["compile + evaluation", prefix, times.total],
        ["evaluation (sampled CPU)", `${prefix}_eval`, times.evaluated],
        [
          "compile (to the first sample, less an empty Worker's)",
          `${prefix}_compile`,
          times.compile,
        ],
      ] as const
    ) {
      into.figure(
        `${who} ${what}, min of ${_RUNS} (ms)`,
        `${key}_min_ms`,
        r1(Math.min(...values)),
      );
      into.figure(`${who} ${what}, p50 (ms)`, `${key}_p50_ms`, r1(pct([...values], 0.5)));
    }
  }
}

/** One Worker's start-up runs: evaluation, compilation (less an empty Worker's wait), their sum. */
function _times() {
  const times = {
    evaluated: [] as number[],
    compile: [] as number[],
    total: [] as number[],
    add(run: ProfileTimes, empty: ProfileTimes): void {
      const compile = Math.max(0, run.firstSampleMs - empty.firstSampleMs);
      times.evaluated.push(run.sampledMs);
      times.compile.push(compile);
      times.total.push(run.sampledMs + compile);
    },
  };
  return times;
}

/**
 * examples/my-agent's upload as `wrangler deploy` would send it (baton resolved as `npm install`
 * links it: `node_modules/baton` → the repo), written to `dir`; its path and its modules' bytes.
 */
async function _noPdfUpload(dir: string): Promise<{ bundle: string; bytes: number }> {
  const link = `${_NO_PDF_APP}/node_modules/baton`;
  await Deno.mkdir(`${_NO_PDF_APP}/node_modules`, { recursive: true });
  await Deno.lstat(link).catch(() => Deno.symlink("../../..", link, { type: "dir" }));
  const bundle = `${dir}/nopdf.bundle`;
  await wranglerDryRun(_NO_PDF_APP, ["--outfile", bundle]);
  const upload = await _uploadModules(await Deno.readFile(bundle));
  const others = [...upload.others.values()].reduce((n, bytes) => n + bytes.length, 0);
  return { bundle, bytes: new TextEncoder().encode(upload.main).length + others };
}

/** One `wrangler check startup` profile of the upload at `bundle`, written to `outfile`. */
async function _profile(bundle: string, outfile: string): Promise<ProfileTimes> {
  await _wrangler(["check", "startup", "--worker", bundle, "--outfile", outfile]);
  return profileTimes(JSON.parse(await Deno.readTextFile(outfile)) as CpuProfile);
}

/** The upload of a Worker that does nothing, in the form `wrangler deploy --outfile` writes. */
async function _emptyWorkerUpload(): Promise<Uint8Array> {
  const form = new FormData();
  const metadata = { main_module: "index.js", compatibility_date: "2026-04-26" };
  form.set("metadata", JSON.stringify(metadata));
  const code = 'export default { fetch() { return new Response("ok"); } };\n';
  form.set("index.js", new Blob([code], { type: "application/javascript+module" }), "index.js");
  return new Uint8Array(await new Response(form).arrayBuffer());
}

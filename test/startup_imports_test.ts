// Tests that the Worker's start-up evaluates none of the heavy optional packages (each is imported on first use) and that pdf.js is not in index.js at all; Deno (esbuild, wrangler).
import * as esbuild from "esbuild";
import { assert, assertEquals } from "@std/assert";
import { startupModules, startupPackages } from "../scripts/bench/bundle_weights.ts";
import { pdfjsExternal } from "../scripts/pdfjs_module.ts";
import { PLATFORMS } from "../lib/platforms/mod.ts";
import { wranglerBundle } from "./_support/worker.ts";

const _root = new URL("../", import.meta.url);

/**
 * Packages only some deployments use, loaded with `import()` where they are needed: a Worker
 * without MCP servers, email, PDFs or a JWT platform never evaluates them at start-up. `openai`
 * (447 KB) is loaded on the first call to an OpenAI-compatible model, so a start-up only pre-parses it.
 */
const _LAZY = ["@modelcontextprotocol/sdk", "ajv", "jose", "openai", "postal-mime", "unpdf"];

/** The Worker's metafile, bundled as the tests bundle it (test/_support/worker.ts), nothing written. */
async function _metafile(): Promise<esbuild.Metafile> {
  try {
    const result = await esbuild.build({
      entryPoints: [new URL("functions/index.ts", _root).pathname],
      outdir: new URL(".tmp/startup-imports", _root).pathname,
      write: false,
      metafile: true,
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      external: ["node:*", "cloudflare:*"],
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["module", "main"],
      plugins: [pdfjsExternal()],
      logLevel: "silent",
    });
    return result.metafile;
  } finally {
    await esbuild.stop(); // its service process would keep the test alive
  }
}

Deno.test("functions/index.ts evaluates none of the optional heavy packages at start-up", async () => {
  const evaluated = startupPackages(await _metafile());
  assertEquals(_LAZY.filter((name) => evaluated.includes(name)), []);
  // The walk itself: baton's own code and its always-used packages are reached.
  assertEquals(["functions", "hono", "lib", "zod"].filter((n) => !evaluated.includes(n)), []);
});

Deno.test("functions/index.ts evaluates no webhook platform's adapter at start-up: each is loaded by its first delivery", async () => {
  const modules = startupModules(await _metafile());
  const adapters = PLATFORMS.map((p) => `lib/platforms/${p.name.replace("-", "_")}.ts`);
  assertEquals(adapters.filter((path) => modules.includes(path)), []);
  // The walk reaches the table, and the files named above exist.
  assert(modules.includes("lib/platforms/mod.ts"), modules.join("\n"));
  for (const path of adapters) await Deno.stat(new URL(path, _root));
});

Deno.test("functions/index.ts bundles zod's English messages only, not its other locales", async () => {
  // `import { z } from "zod"` is a namespace object esbuild keeps whole (every locale, 600 KB
  // evaluated at start-up); `import * as z from "zod"` lets it keep only what is used.
  const [output] = Object.values((await _metafile()).outputs);
  const locales = Object.entries(output.inputs)
    .filter(([path, { bytesInOutput }]) => path.includes("zod/v4/locales/") && bytesInOutput > 0)
    .map(([path]) => path.slice(path.lastIndexOf("/") + 1))
    .filter((file) => file !== "index.js"); // an empty stub once its namespace is shaken off
  assertEquals(locales, ["en.js"]);
});

Deno.test("functions/index.ts bundled as the tests bundle it holds no pdf.js: it imports ./pdfjs.mjs", async () => {
  const meta = await _metafile();
  assertEquals(Object.keys(meta.inputs).filter((path) => path.includes("node_modules/unpdf/")), []);
  const pdfjs = Object.values(meta.inputs).flatMap((input) => input.imports)
    .filter((edge) => edge.path === "./pdfjs.mjs");
  assertEquals(pdfjs.map(({ kind, external }) => ({ kind, external })), [
    { kind: "dynamic-import", external: true },
  ]);
});

Deno.test(
  "wrangler deploy --dry-run uploads pdf.js as pdfjs.mjs beside index.js, not inside it",
  async () => {
    const outdir = new URL(".tmp/startup-imports/wrangler", _root).pathname;
    await Deno.remove(outdir, { recursive: true }).catch(() => {});
    const index = await Deno.readTextFile(await wranglerBundle(_root.pathname, outdir));
    const pdfjs = await Deno.readTextFile(`${outdir}/pdfjs.mjs`);
    // pdf.js's build starts by polyfilling DOMMatrix: that function is in the module, not the main one.
    assert(pdfjs.includes("function polyfillDOMMatrix"), "pdfjs.mjs is pdf.js");
    assert(!index.includes("polyfillDOMMatrix"), "index.js holds pdf.js");
    assert(index.includes('import("./pdfjs.mjs")'), "index.js imports ./pdfjs.mjs");
  },
);

/**
 * A module-scope `const x = z.…` other than `z.lazy(…)` (deno fmt keeps module scope at column 0):
 * a schema built while its module is evaluated, at every start-up, whether a request needs it or not.
 */
const _EAGER_SCHEMA = /^(?:export )?(?:const|let) (\w+)(?:: [^=]+)? = z\.(?!lazy\()/gm;

/** Built at start-up on purpose: one string check the MCP tools' descriptions build on. */
const _EAGER_ALLOWED = ["lib/openai/openai_api.ts sessionIdField"];

Deno.test("functions/index.ts evaluates no module of baton's that builds a zod schema at module scope", async () => {
  // Each webhook, request and tool-argument schema is `z.lazy`: built on its first parse.
  const own = startupModules(await _metafile()).filter((path) => /^(lib|functions)\//.test(path));
  assert(own.includes("functions/run_routes.ts"), "the walk reaches the routes");
  const eager: string[] = [];
  for (const path of own) {
    for (const [, name] of (await Deno.readTextFile(path)).matchAll(_EAGER_SCHEMA)) {
      eager.push(`${path} ${name}`);
    }
  }
  assertEquals(eager, _EAGER_ALLOWED);
});

Deno.test("wrangler deploy --dry-run names no function at start-up (keep_names = false, as the tests bundle it)", async () => {
  const outdir = new URL(".tmp/startup-imports/names", _root).pathname;
  await Deno.remove(outdir, { recursive: true }).catch(() => {});
  const index = await Deno.readTextFile(await wranglerBundle(_root.pathname, outdir));
  // keep_names wraps every function and class in a `__name(…)` call evaluated at start-up
  // (≈2,900 of them, an eighth of evaluation); nothing in baton reads a function's name.
  assert(!index.includes("__name("), "index.js names its functions at start-up: keep_names");
  assert(index.includes("function batonApp("), "index.js is the Worker");
});

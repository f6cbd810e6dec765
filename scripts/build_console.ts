// Builds the web console (functions/console/) into .console/, the Worker's static assets: esbuild, minified, no network; Deno.
import * as esbuild from "esbuild";

const _root = new URL("../", import.meta.url);

/** Where the console is built, relative to the project root (wrangler.toml `[assets] directory`). */
export const CONSOLE_DIR = ".console";

/** Files copied as they are: the page, and the headers Workers static assets send with it. */
const _STATIC = ["index.html", "_headers"];

/**
 * Bundles `functions/console/main.tsx` (preact, TSX) into `<outdir>/console.js` and its CSS into
 * `console.css`, and copies the page; returns the absolute path of `outdir`. Everything the page
 * loads comes from this directory: no CDN, no external font.
 */
export async function buildConsole(outdir = CONSOLE_DIR): Promise<string> {
  const out = new URL(`${outdir.replace(/\/?$/, "/")}`, _root).pathname;
  const source = new URL("functions/console/", _root).pathname;
  await Deno.mkdir(out, { recursive: true });
  try {
    await esbuild.build({
      entryPoints: { console: `${source}main.tsx` },
      outdir: out,
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      jsx: "automatic",
      jsxImportSource: "preact",
      nodePaths: [new URL("node_modules", _root).pathname],
      legalComments: "none",
      logLevel: "warning",
    });
  } finally {
    // esbuild's service process would otherwise keep Deno alive.
    await esbuild.stop();
  }
  for (const name of _STATIC) await Deno.copyFile(`${source}${name}`, `${out}${name}`);
  return out;
}

if (import.meta.main) {
  const out = await buildConsole(Deno.args[0]);
  console.log(`console built into ${out}`);
}

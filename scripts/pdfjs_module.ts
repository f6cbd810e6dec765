// pdf.js as a module of its own in esbuild bundles (the tests' and the bench's), as wrangler.toml's `base_dir` + `[[rules]]` make it in wrangler's; Deno.
import type * as esbuild from "esbuild";

const _root = new URL("../", import.meta.url);

/** The import of functions/pdfjs/load_pdfjs.ts, kept as written in the bundle: resolved beside index.js. */
export const PDFJS_SPECIFIER = "./pdfjs.mjs";

/** The module file the specifier names, as wrangler uploads it (a symlink into node_modules/unpdf). */
export const PDFJS_FILE = new URL("functions/pdfjs/pdfjs.mjs", _root).pathname;

/**
 * An esbuild plugin that leaves `import("./pdfjs.mjs")` of functions/pdfjs/ out of the bundle
 * (external, path unchanged), as wrangler's module collector does for a module it found under
 * `base_dir`; put `PDFJS_FILE` beside the bundle with `writePdfjsModule`.
 */
export function pdfjsExternal(): esbuild.Plugin {
  const dir = new URL("functions/pdfjs", _root).pathname;
  return {
    name: "baton-pdfjs-module",
    setup(build) {
      build.onResolve(
        { filter: /^\.\/pdfjs\.mjs$/ },
        (args) => args.resolveDir === dir ? { path: PDFJS_SPECIFIER, external: true } : undefined,
      );
    },
  };
}

/** Writes pdf.js into `outdir` (absolute) as `pdfjs.mjs`, the module a bundle made with `pdfjsExternal` imports. */
export async function writePdfjsModule(outdir: string): Promise<void> {
  await Deno.mkdir(outdir, { recursive: true });
  await Deno.copyFile(PDFJS_FILE, `${outdir.replace(/\/+$/, "")}/pdfjs.mjs`);
}

// Loads pdf.js as a module of its own: wrangler uploads ./pdfjs.mjs beside index.js (wrangler.toml's `base_dir` and `[[rules]]`), evaluated only when a PDF is read (workerd still compiles it at start-up, like every uploaded module); Workers.
import type { PdfjsModule } from "../../lib/media/pdf_text.ts";

/**
 * pdf.js, imported on first use: what a deployment that reads PDFs passes as `defineBaton({ pdf })`
 * (exported as `baton/pdfjs`; a Worker that does not import it carries no pdf.js). `./pdfjs.mjs` is
 * a symlink to `node_modules/unpdf/dist/pdfjs.mjs` (nothing vendored). This file must stay in the
 * same folder as it: wrangler keeps the import as written only when the path, taken from the
 * importing file, is a module it found under `base_dir`, and the same path, taken from index.js,
 * names that module at run time. A bundler without that rule (a library user's default
 * wrangler.toml, plain esbuild) inlines it instead.
 * Where the symlink is missing (an `npm pack`ed install), the import stays `./pdfjs.mjs` and the
 * deployer uploads it (docs/guides/library.md).
 */
export async function loadPdfjs(): Promise<PdfjsModule> {
  // In a try: where ./pdfjs.mjs is absent (npm pack drops symlinks), esbuild leaves the import
  // as written instead of failing the build; the module is then the deployer's to upload.
  try {
    // @ts-types="./pdfjs.d.mts"
    return await import("./pdfjs.mjs");
  } catch (error) {
    throw new Error("pdf.js (./pdfjs.mjs) could not be loaded", { cause: error });
  }
}

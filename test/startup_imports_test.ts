// Tests that the Worker's start-up evaluates none of the heavy optional packages: each is imported on first use; Deno (esbuild).
import * as esbuild from "esbuild";
import { assertEquals } from "@std/assert";
import { type Metafile, startupPackages } from "../scripts/bench/bundle_weights.ts";

const _root = new URL("../", import.meta.url);

/**
 * Packages only some deployments use, loaded with `import()` where they are needed: a Worker
 * without MCP servers, email, PDFs or a JWT platform never evaluates them at start-up.
 */
const _LAZY = ["@modelcontextprotocol/sdk", "ajv", "jose", "postal-mime", "unpdf"];

/** The Worker's metafile, bundled as the tests bundle it (test/_support/worker.ts), nothing written. */
async function _metafile(): Promise<Metafile> {
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

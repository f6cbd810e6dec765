// Tests of the bench's bundle arithmetic (scripts/bench/bundle_weights.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import {
  type CpuProfile,
  packageOf,
  packageWeights,
  profileTimes,
  startupModules,
  startupPackages,
} from "./bundle_weights.ts";

Deno.test("packageOf() names the innermost package, a scope with its name, else the top folder", () => {
  assertEquals(packageOf("node_modules/zod/v4/core/core.js"), "zod");
  assertEquals(
    packageOf("node_modules/@modelcontextprotocol/sdk/dist/esm/types.js"),
    "@modelcontextprotocol/sdk",
  );
  assertEquals(packageOf("node_modules/a/node_modules/b/index.js"), "b");
  assertEquals(packageOf("lib/session/schema.ts"), "lib");
});

Deno.test("packageWeights() splits an esbuild bundle at its module headers and groups by package", async () => {
  const bundle = [
    "var __defProp = Object.defineProperty;",
    "// node_modules/zod/a.js",
    "var a = 1;",
    "// node_modules/zod/b.js",
    "var b = 2;",
    "// lib/x.ts",
    "// a comment that names no path",
    "var x = a + b;",
  ].join("\n");
  const weights = await packageWeights(bundle);
  assertEquals(weights.map((w) => [w.name, w.modules]), [["zod", 2], ["lib", 1]]); // heaviest first
  const lib = weights[1];
  assertEquals(lib.raw, "// lib/x.ts\n// a comment that names no path\nvar x = a + b;".length);
  assert(lib.gzip > 0);
});

Deno.test("startupPackages(), startupModules() follow static imports and requires from the entry, not import()", () => {
  const imports = (...edges: [string, string][]) => edges.map(([path, kind]) => ({ path, kind }));
  const meta = {
    outputs: { "out/index.js": { entryPoint: "functions/index.ts" } },
    inputs: {
      "functions/index.ts": {
        imports: [
          ...imports(["lib/a.ts", "import-statement"], [
            "node_modules/jose/index.js",
            "dynamic-import",
          ]),
          { path: "cloudflare:workers", kind: "import-statement", external: true },
        ],
      },
      "lib/a.ts": { imports: imports(["node_modules/ajv/x.js", "require-call"]) },
      "node_modules/ajv/x.js": { imports: [] },
      "node_modules/jose/index.js": {
        imports: imports(["node_modules/jose/b.js", "import-statement"]),
      },
      "node_modules/jose/b.js": { imports: [] },
    },
  };
  assertEquals(startupPackages(meta), ["ajv", "functions", "lib"]);
  assertEquals(startupModules(meta), ["functions/index.ts", "lib/a.ts", "node_modules/ajv/x.js"]);
});

Deno.test("profileTimes() sums the samples but (idle), each until the next, the last the median gap, and times the first", () => {
  const frame = (id: number, functionName: string) => ({ id, callFrame: { functionName } });
  const profile: CpuProfile = {
    nodes: [
      frame(1, "(root)"),
      frame(2, "(idle)"),
      frame(3, "init"),
      frame(4, "(garbage collector)"),
    ],
    startTime: 1_000_000,
    // samples at +80 ms, +81, +84, +85; the profile ends at +90
    samples: [2, 3, 4, 3],
    timeDeltas: [80_000, 1_000, 3_000, 1_000],
    endTime: 1_090_000,
  };
  // idle 80..81 left out; init 81..84 (3), gc 84..85 (1), init 85..86 (the median gap, 1): not
  // until the end at 90, which comes when the profiler is stopped, after the evaluation.
  assertEquals(profileTimes(profile), { sampledMs: 5, firstSampleMs: 80 });
  // A stall of the sampler (a gap over five medians) counts as one median gap: 81..111 is one.
  const stalled = {
    ...profile,
    timeDeltas: [80_000, 1_000, 30_000, 1_000, 1_000],
    samples: [2, 3, 4, 3, 3],
  };
  assertEquals(profileTimes(stalled).sampledMs, 4);
  // An empty Worker's lone sample measures nothing: its tail is the harness's.
  const lone = { ...profile, samples: [3], timeDeltas: [50_000] };
  assertEquals(profileTimes(lone), { sampledMs: 0, firstSampleMs: 50 });
});

// Tests that a Worker request's entry binding reads the deployment's variables once per env object (setting defaults or not), not per request, and per deployment; Deno (hono, no workerd).
/// <reference types="@cloudflare/workers-types" />
// (functions/_http.ts is typed against the Workers globals, as test/docs_test.ts says.)
import { Hono } from "hono";
import { assert, assertEquals } from "@std/assert";
import { type App, entryBinding } from "../functions/_http.ts";
import { deploymentOf } from "../lib/deployment/mod.ts";

/** An env whose property reads are counted (readConfig reads each setting by name). */
function countedEnv(vars: Record<string, unknown>): { env: object; reads: () => number } {
  let reads = 0;
  const env = new Proxy(vars, {
    get(target, name) {
      reads++;
      return Reflect.get(target, name);
    },
  });
  return { env, reads: () => reads };
}

Deno.test("entryBinding() reads the config once per env: a second request reads no variable", async () => {
  const app = new Hono<App>();
  app.use("*", entryBinding(deploymentOf()));
  app.get("/", (c) => c.text(c.var.config.llmModel));
  const { env, reads } = countedEnv({ LLM_MODEL: "m-1" });
  assertEquals(await (await app.request("/", {}, env)).text(), "m-1");
  const first = reads();
  assert(first > 0, "the first request reads the settings");
  assertEquals(await (await app.request("/", {}, env)).text(), "m-1");
  assertEquals(reads() - first, 0, "the second request on the same env reads none");
  // Another env (a new deploy's isolate, a test's own bindings) is read anew.
  assertEquals(await (await app.request("/", {}, { LLM_MODEL: "m-2" })).text(), "m-2");
});

Deno.test("entryBinding() reads the config once per env with setting defaults too, and per deployment", async () => {
  // As defineBaton's fetch hands the app its env: with the code's defaults merged under it.
  const withDefaults = deploymentOf({ settings: { MAX_TURN_STEPS: 7 } });
  const app = new Hono<App>();
  app.use("*", entryBinding(withDefaults));
  app.get("/", (c) => c.text(`${c.var.config.llmModel} ${c.var.config.maxTurnSteps}`));
  const { env, reads } = countedEnv({ LLM_MODEL: "m-1" });
  const request = () => app.request("/", {}, withDefaults.env(env));
  assertEquals(await (await request()).text(), "m-1 7");
  const first = reads();
  assertEquals(await (await request()).text(), "m-1 7");
  assertEquals(reads() - first, 0, "the second request on the same env reads none");

  // Another deployment of the bundle, on the very same env: its own config (its pdf.js).
  const pdf = () => import("unpdf/pdfjs");
  const reader = new Hono<App>();
  reader.use("*", entryBinding(deploymentOf({ pdf })));
  reader.get("/", (c) => c.text(c.var.config.media.pdf === pdf ? "reads PDFs" : "refuses PDFs"));
  const plain = new Hono<App>();
  plain.use("*", entryBinding(deploymentOf()));
  plain.get("/", (c) => c.text(c.var.config.media.pdf === null ? "refuses PDFs" : "reads PDFs"));
  const shared = { LLM_MODEL: "m-2" };
  assertEquals(await (await plain.request("/", {}, shared)).text(), "refuses PDFs");
  assertEquals(await (await reader.request("/", {}, shared)).text(), "reads PDFs");
  assertEquals(await (await plain.request("/", {}, shared)).text(), "refuses PDFs");
});

// Tests that a Worker request's entry binding reads the deployment's variables once per env object, not per request; Deno (hono, no workerd).
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

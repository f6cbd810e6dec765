// Unit tests for lib/openai/openai_api.ts's completion ids: stable per run, distinct across tenants; Deno.
import { assert, assertStrictEquals } from "@std/assert";
import { tenantSessionKey } from "../api/mod.ts";
import { completionId } from "./openai_api.ts";

Deno.test("completionId() is stable for one run and differs for one X-Session-Id in two tenants", async () => {
  const acme = await completionId(tenantSessionKey("acme", "s"), 1);
  assertStrictEquals(await completionId(tenantSessionKey("acme", "s"), 1), acme, "a retry's id");
  assert(/^chatcmpl-[0-9a-f]{32}$/.test(acme), acme);
  const others = [
    await completionId(tenantSessionKey("beta", "s"), 1),
    await completionId(tenantSessionKey("default", "s"), 1),
    await completionId(tenantSessionKey("acme", "s"), 2),
  ];
  for (const id of others) assert(id !== acme, id);
});

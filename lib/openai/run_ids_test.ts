// Unit tests for lib/openai/run_ids.ts: run ids round-trip and malformed ones are refused; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { parseRunId, runId } from "./run_ids.ts";

Deno.test("runId() round-trips through parseRunId(), base64url without padding", () => {
  for (const session of ["a", "api:x.y-z_1", "s".repeat(128), "??>"]) {
    const id = runId("acme", session, 42);
    assertEquals(/^run_[A-Za-z0-9_-]+_42$/.test(id), true, id);
    if (session === "??>") assertStrictEquals(parseRunId(id), null); // not a session id
    else assertEquals(parseRunId(id), { tenant: "acme", session, seq: 42 });
  }
});

Deno.test("parseRunId() refuses other ids", () => {
  for (const id of ["", "run_", "run_YQ_0", "run_YQ_01", "resp_YQ_1", "run_Y!_1", "run_YQ_1x"]) {
    assertStrictEquals(parseRunId(id), null, id);
  }
});

Deno.test("runId() names the tenant: one session id in two tenants gives two ids", () => {
  const acme = runId("acme", "s1", 1);
  const beta = runId("beta", "s1", 1);
  assertStrictEquals(acme === beta, false, acme);
  assertEquals(parseRunId(acme), { tenant: "acme", session: "s1", seq: 1 });
  assertEquals(parseRunId(runId("t".repeat(32), "s".repeat(128), 7)), {
    tenant: "t".repeat(32),
    session: "s".repeat(128),
    seq: 7,
  });
  // An id from before: no tenant, the caller's.
  assertEquals(parseRunId("run_czE_1"), { tenant: null, session: "s1", seq: 1 });
  assertStrictEquals(parseRunId(`run_${btoa("a.b/s1")}_1`), null, "not a tenant's name");
});

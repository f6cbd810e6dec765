// Unit tests for lib/run_ids.ts: run ids round-trip and malformed ones are refused; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { parseRunId, runId } from "./run_ids.ts";

Deno.test("runId() round-trips through parseRunId(), base64url without padding", () => {
  for (const session of ["a", "api:x.y-z_1", "s".repeat(128), "??>"]) {
    const id = runId(session, 42);
    assertEquals(/^run_[A-Za-z0-9_-]+_42$/.test(id), true, id);
    if (session === "??>") assertStrictEquals(parseRunId(id), null); // not a session id
    else assertEquals(parseRunId(id), { session, seq: 42 });
  }
});

Deno.test("parseRunId() refuses other ids", () => {
  for (const id of ["", "run_", "run_YQ_0", "run_YQ_01", "resp_YQ_1", "run_Y!_1", "run_YQ_1x"]) {
    assertStrictEquals(parseRunId(id), null, id);
  }
});

// Unit tests for functions/console/session_keys.ts: which session keys the console can chat in; Deno.
import { assertEquals, assertMatch } from "@std/assert";
import { apiSessionId, newSessionId } from "./session_keys.ts";

Deno.test("apiSessionId() reads the runs API id of a tenant's session key, and none of a platform's", () => {
  assertEquals(apiSessionId("api:demo"), "demo");
  assertEquals(apiSessionId("api.acme:a:b"), "a:b");
  assertEquals(apiSessionId("telegram:42"), null);
  assertEquals(apiSessionId("webhook:x"), null);
});

Deno.test("newSessionId() is in the runs API's session alphabet", () => {
  assertMatch(newSessionId(), /^console-[0-9a-f]{16}$/);
});

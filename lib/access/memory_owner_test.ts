// Unit tests of whose memory a turn reads: chat users by their access record, API users by tenant and `user`; Deno.
import { assertEquals } from "@std/assert";
import { memoryOwner } from "./memory_owner.ts";

Deno.test("memoryOwner() names a chat user's own access record, as the access gate names it", () => {
  assertEquals(memoryOwner({ platform: "telegram", user_id: "42" }, false), {
    object: "sender:telegram:42",
  });
  // Slack names a sender `T…/U…`: the team comes from the session key, as the gate has it.
  const slack = { platform: "slack", user_id: "U1", session_key: "slack:T9:D1" };
  assertEquals(memoryOwner(slack, false), { object: "sender:slack:T9/U1" });
});

Deno.test("memoryOwner() keys an API user by tenant and `user`: two tenants' u1 are two objects", () => {
  const acme = memoryOwner({ platform: "api", user_id: "u1", session_key: "api.acme:s1" }, false);
  const globex = memoryOwner(
    { platform: "api", user_id: "u1", session_key: "api.globex:s" },
    false,
  );
  assertEquals(acme, { object: "apiuser:acme:u1" });
  assertEquals(globex, { object: "apiuser:globex:u1" });
  assertEquals(memoryOwner({ platform: "api", user_id: "u1", session_key: "api:s" }, false), {
    object: "apiuser:default:u1",
  });
});

Deno.test("memoryOwner() gives none to an API request without `user`, a group chat, the generic webhook, a job", () => {
  for (
    const [context, group] of [
      [{ platform: "api", user_id: "", session_key: "api:s" }, false],
      [{ platform: "telegram", user_id: "42" }, true],
      [{ platform: "generic", user_id: "ops" }, false],
      [{ platform: "telegram", user_id: "42", job_id: "3" }, false],
    ] as const
  ) {
    const owner = memoryOwner(context, group);
    assertEquals("none" in owner, true, JSON.stringify(context));
  }
});

// Unit tests for functions/console/session_status.ts: the session list's status column; Deno.
import { assertEquals } from "@std/assert";
import { statusText } from "./session_status.ts";

Deno.test("statusText() names idle, running, waiting for approval and the queue", () => {
  assertEquals(statusText({ status: "idle", queued: 0 }), "idle");
  assertEquals(statusText({ status: "running", queued: 2 }), "running · queued 2");
  assertEquals(statusText({ status: "waiting_for_approval", queued: 0 }), "waiting for approval");
  assertEquals(statusText({ status: "something new", queued: 1 }), "idle · queued 1");
});

// Unit tests of an API tenant's caps: the sessions it holds and its open streams' leases; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import {
  acquireStream,
  admitSession,
  forgetSession,
  releaseStream,
  sessionCount,
  STREAM_LEASE_MS,
} from "./tenant_caps.ts";
import { memoryRecordStorage } from "./_memory_record_storage.ts";

const memory = memoryRecordStorage;

const T0 = 1_800_000_000_000;

Deno.test("admitSession() counts each session once and refuses a new one past the limit", () => {
  const tenant = memory();
  assertEquals(admitSession(tenant, "api.a:s1", 2, false), { admitted: true });
  assertEquals(admitSession(tenant, "api.a:s1", 2, false), { admitted: true }, "again: once");
  assertEquals(admitSession(tenant, "api.a:s2", 2, false), { admitted: true });
  assertEquals(admitSession(tenant, "api.a:s3", 2, false), { admitted: false, count: 2 });
  assertEquals(
    admitSession(tenant, "api.a:s1", 2, false),
    { admitted: true },
    "counted ones go on",
  );
  // A session holding messages from before it was counted keeps working (and is counted).
  assertEquals(admitSession(tenant, "api.a:old", 2, true), { admitted: true });
  assertStrictEquals(sessionCount(tenant), 3);
});

Deno.test("forgetSession() frees a session's place once", () => {
  const tenant = memory();
  admitSession(tenant, "api.a:s1", 1, false);
  assertStrictEquals(admitSession(tenant, "api.a:s2", 1, false).admitted, false);
  assertStrictEquals(forgetSession(tenant, "api.a:s1"), true);
  assertStrictEquals(forgetSession(tenant, "api.a:s1"), false, "twice: nothing more");
  assertStrictEquals(sessionCount(tenant), 0);
  assertStrictEquals(admitSession(tenant, "api.a:s2", 1, false).admitted, true);
});

Deno.test("acquireStream() holds `limit` leases; a released or lapsed one frees its slot", () => {
  const tenant = memory();
  assertStrictEquals(acquireStream(tenant, "one", 2, T0), null);
  assertStrictEquals(acquireStream(tenant, "two", 2, T0 + 10), null);
  assertStrictEquals(acquireStream(tenant, "three", 2, T0 + 20), STREAM_LEASE_MS - 20);
  assertStrictEquals(acquireStream(tenant, "one", 2, T0 + 30), null, "a renewal, not a slot");
  releaseStream(tenant, "two");
  releaseStream(tenant, "two");
  assertStrictEquals(acquireStream(tenant, "three", 2, T0 + 40), null);
  // No renewal for a lease's time (its isolate died): the slot is free again.
  assertStrictEquals(acquireStream(tenant, "four", 2, T0 + 40 + STREAM_LEASE_MS), null);
});

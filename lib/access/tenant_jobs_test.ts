// Unit tests of an API tenant's job count across its sessions (MAX_JOBS_PER_TENANT); Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { admitJob, forgetJobs, reportJobs, tenantJobCount } from "./tenant_jobs.ts";
import { memoryRecordStorage } from "./_memory_record_storage.ts";

const memory = memoryRecordStorage;

Deno.test("admitJob() counts jobs across the tenant's sessions and refuses one past the limit", () => {
  const tenant = memory();
  assertEquals(admitJob(tenant, "api.a:s1", 0, 3), { admitted: true });
  assertEquals(admitJob(tenant, "api.a:s1", 1, 3), { admitted: true });
  assertEquals(admitJob(tenant, "api.a:s2", 0, 3), { admitted: true });
  assertStrictEquals(tenantJobCount(tenant), 3);
  assertEquals(admitJob(tenant, "api.a:s3", 0, 3), { admitted: false, count: 3 });
  assertEquals(admitJob(tenant, "api.a:s1", 2, 3), { admitted: false, count: 3 });
  assertStrictEquals(tenantJobCount(tenant), 3, "a refusal changes nothing");
});

Deno.test("admitJob() takes the session's own count from what it holds now, not what it said before", () => {
  const tenant = memory();
  admitJob(tenant, "api.a:s1", 0, 2);
  admitJob(tenant, "api.a:s1", 1, 2);
  // s1's jobs ended while its report was lost: its next create says it holds none.
  assertEquals(admitJob(tenant, "api.a:s1", 0, 2), { admitted: true });
  assertStrictEquals(tenantJobCount(tenant), 1);
  // A reservation whose job was never stored is corrected by the session's next report.
  admitJob(tenant, "api.a:s2", 0, 2);
  reportJobs(tenant, "api.a:s2", 0);
  assertStrictEquals(tenantJobCount(tenant), 1);
  assertEquals(admitJob(tenant, "api.a:s3", 0, 2), { admitted: true });
});

Deno.test("reportJobs() sets a session's count, and a session with none keeps no key", () => {
  const tenant = memory();
  reportJobs(tenant, "api.a:old", 5); // jobs made before the cap was on
  reportJobs(tenant, "api.a:s1", 1);
  assertStrictEquals(tenantJobCount(tenant), 6);
  assertEquals(admitJob(tenant, "api.a:s2", 0, 6), { admitted: false, count: 6 });
  reportJobs(tenant, "api.a:old", 4);
  reportJobs(tenant, "api.a:old", 4); // the same report twice counts once
  assertStrictEquals(tenantJobCount(tenant), 5);
  reportJobs(tenant, "api.a:s1", 0);
  assertEquals(tenant.keys(), ["jobs", "jobs:api.a:old"]);
});

Deno.test("forgetJobs() frees an erased session's jobs once", () => {
  const tenant = memory();
  admitJob(tenant, "api.a:s1", 0, 2);
  admitJob(tenant, "api.a:s2", 0, 2);
  assertStrictEquals(forgetJobs(tenant, "api.a:s1"), true);
  assertStrictEquals(forgetJobs(tenant, "api.a:s1"), false);
  assertStrictEquals(tenantJobCount(tenant), 1);
  assertEquals(admitJob(tenant, "api.a:s3", 0, 2), { admitted: true });
});

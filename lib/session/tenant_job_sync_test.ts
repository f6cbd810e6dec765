// Unit tests of a session's side of MAX_JOBS_PER_TENANT (lib/session/tenant_job_sync.ts) against an in-memory tenant (lib/access/tenant_jobs.ts), and through the sentinel; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { admitJob, reportJobs, tenantJobCount } from "../access/tenant_jobs.ts";
import type { RecordStorage } from "../access/record_storage.ts";
import { type JobSpec, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { type TenantJobCount, TenantJobSync } from "./tenant_job_sync.ts";
import { currentTurnJobs } from "./turn_jobs.ts";
import { memoryRecordStorage } from "../access/_memory_record_storage.ts";

const T0 = Date.parse("2026-03-01T12:00:00Z");

const memory = memoryRecordStorage;

/**
 * Session `key`'s line to `tenant` as the Worker builds it (a mark of the last count the tenant
 * acknowledged; a report of that count again asks nothing), each call awaited like an RPC and
 * recorded; `fail` makes the next reports throw.
 */
function line(tenant: RecordStorage, key: string, limit: number) {
  const calls: string[] = [];
  const state = { mark: 0, fail: false };
  const count: TenantJobCount = {
    async admit(live) {
      await Promise.resolve();
      calls.push(`admit ${live}`);
      if (!admitJob(tenant, key, live, limit).admitted) return `MAX_JOBS_PER_TENANT (${limit})`;
      state.mark = live + 1;
      return null;
    },
    async report(live) {
      if (state.mark === live) return;
      await Promise.resolve();
      calls.push(`report ${live}`);
      if (state.fail) throw new Error("tenant unreachable");
      reportJobs(tenant, key, live);
      state.mark = live;
    },
  };
  return { count, calls, state };
}

Deno.test("TenantJobSync.create() runs two creates of one session one after the other: never both on the last slot", async () => {
  const tenant = memory();
  const { count } = line(tenant, "api.a:s1", 2);
  let live = 1;
  reportJobs(tenant, "api.a:s1", 1);
  const sync = new TenantJobSync(count, () => live);
  const store = () => ({ job: ++live });
  const [a, b] = await Promise.all([
    sync.create(() => true, store),
    sync.create(() => true, store),
  ]);
  assertEquals([a, b], [{ job: 2 }, { refused: "MAX_JOBS_PER_TENANT (2)" }]);
  assertStrictEquals(tenantJobCount(tenant), 2);
});

Deno.test("TenantJobSync.create() gives a reservation back when nothing was stored, and asks nothing for a job refused anyway", async () => {
  const tenant = memory();
  const { count, calls } = line(tenant, "api.a:s1", 5);
  const sync = new TenantJobSync(count, () => 0);
  assertEquals(await sync.create(() => true, () => ({ error: "the turn has ended" })), {
    error: "the turn has ended",
  });
  assertStrictEquals(tenantJobCount(tenant), 0);
  assertEquals(await sync.create(() => false, () => ({ error: "bad" })), { error: "bad" });
  assertEquals(calls, ["admit 0", "report 0"]);
});

Deno.test("TenantJobSync.settle() reports again after a lost report, and once per instance", async () => {
  const tenant = memory();
  const { count, calls, state } = line(tenant, "api.a:s1", 5);
  let live = 3; // jobs from before the cap was on: the tenant knows none
  const sync = new TenantJobSync(count, () => live);
  await sync.settle();
  assertStrictEquals(tenantJobCount(tenant), 3, "counted at the first drain's end");
  await sync.settle();
  assertEquals(calls, ["report 3"], "then nothing more while nothing changes");
  state.fail = true;
  live = 2;
  await sync.sync(); // logged, not thrown
  assertStrictEquals(tenantJobCount(tenant), 3);
  state.fail = false;
  await sync.settle();
  assertStrictEquals(tenantJobCount(tenant), 2, "the next drain's end makes it good");
});

Deno.test("TenantJobSync without a tenant line stores as asked and does no I/O", async () => {
  const sync = new TenantJobSync(undefined, () => 99);
  assertEquals(await sync.create(() => true, () => ({ job: 1 })), { job: 1 });
  await sync.sync();
  await sync.settle();
});

const SPEC: JobSpec = { prompt: "stretch", schedule: { in: 60 } };

Deno.test("SessionSentinel counts its jobs in its tenant: refused past the cap (API and tool), freed when a one-off has run", async () => {
  const clock = { now: T0 };
  const tenant = memory();
  reportJobs(tenant, "api.a:other", 1); // the tenant's other session holds one
  const { count } = line(tenant, "api.a:s1", 2);
  const toolSaid: string[] = [];
  const exec = recordingExecutor();
  // The turn runner binds the turn's frame (its jobs among it): the executor binds nothing.
  const execute: TurnExecutor = async (message, history, progress, signal) => {
    if (message.text === "plan") {
      const made = await currentTurnJobs()!.create(SPEC);
      toolSaid.push("error" in made ? made.error : "scheduled");
    }
    return exec.execute(message, history, progress, signal);
  };
  const sentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    tenantJobs: count,
    now: () => clock.now,
  });
  const api = (spec: JobSpec) =>
    sentinel.withNewJob(
      spec,
      (jobs, tx) => jobs.apply(tx, { op: "create", spec, origin: "api" }, "api.a:s1"),
    );

  assertEquals("job" in await api(SPEC), true);
  assertStrictEquals(tenantJobCount(tenant), 2);
  assertEquals(await api(SPEC), { refused: "MAX_JOBS_PER_TENANT (2)" });
  sentinel.submit(msg("plan"));
  await sentinel.alarm();
  assertEquals(toolSaid, ["MAX_JOBS_PER_TENANT (2)"]);
  assertStrictEquals(sentinel.withJobs((jobs) => jobs.list().length), 1, "nothing stored");

  clock.now += 60_000; // the one-off runs and is done
  await sentinel.alarm();
  assertStrictEquals(tenantJobCount(tenant), 1);
  sentinel.submit(msg("plan"));
  await sentinel.alarm();
  assertEquals(toolSaid, ["MAX_JOBS_PER_TENANT (2)", "scheduled"]);
  assertStrictEquals(tenantJobCount(tenant), 2);
});

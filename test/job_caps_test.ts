// MAX_JOBS_PER_TENANT in workerd: an API tenant's jobs counted across its sessions (the jobs API and the model's schedule_task), freed by a deleted job, a done one-off and an erased session; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { chat, chatReply, type Json, json, until } from "./_support/clients.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-key-0123456789";
const BETA = "beta-key-0123456789";
const GAMMA = "gamma-key-0123456789";
const DELTA = "delta-key-0123456789";

// Two jobs per tenant at most (per session: the default 20), each test with tenants of its own.
const baton = sharedBaton({
  vars: {
    GATEWAY_API_KEYS: `acme:${ACME},beta:${BETA},gamma:${GAMMA},delta:${DELTA}`,
    MAX_JOBS_PER_TENANT: "2",
  },
  label: "job caps",
});

function api(worker: TestWorker, key: string, path: string, init: RequestInit = {}) {
  return worker.fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
}

/** POST /v1/jobs in API session `session` of `key`'s tenant, an hour from now unless `schedule`. */
function createJob(
  worker: TestWorker,
  key: string,
  session: string,
  schedule: Json = { in: 3600 },
): Promise<Response> {
  return api(worker, key, "/v1/jobs", {
    method: "POST",
    body: JSON.stringify({ session, prompt: "later", schedule }),
  });
}

async function created(res: Response): Promise<Json> {
  const body = await json(res);
  assertStrictEquals(res.status, 201, JSON.stringify(body));
  return body;
}

/** Asserts the 429 `job_limit` naming the setting and its value. */
async function expectJobLimit(res: Response): Promise<void> {
  const body = await json(res);
  assertStrictEquals(res.status, 429, JSON.stringify(body));
  assertStrictEquals(body.error?.type, "job_limit", JSON.stringify(body));
  assert(body.error.message.includes("MAX_JOBS_PER_TENANT (2)"), body.error.message);
}

async function jobsIn(worker: TestWorker, key: string, session: string): Promise<Json[]> {
  return (await json(await api(worker, key, `/v1/jobs?session=${session}`))).data;
}

baton.test(
  "MAX_JOBS_PER_TENANT: a tenant's third job across two sessions is a 429 job_limit; a deleted job, a done one-off and an erased session free their slots; another tenant counts its own",
  async (worker) => {
    const one = await created(await createJob(worker, ACME, "jc-1"));
    await created(await createJob(worker, ACME, "jc-2"));
    await expectJobLimit(await createJob(worker, ACME, "jc-3"));
    await expectJobLimit(await createJob(worker, ACME, "jc-1"));
    assertEquals(await jobsIn(worker, ACME, "jc-3"), [], "a refused job is not stored");
    // Another tenant is not held by acme's count.
    await created(await createJob(worker, BETA, "jc-1"));
    await created(await createJob(worker, BETA, "jc-2"));

    // A deleted job frees its slot.
    const deleted = await api(worker, ACME, `/v1/jobs/${one.id}`, { method: "DELETE" });
    assertStrictEquals(deleted.status, 200, await deleted.text());
    const soon = await created(await createJob(worker, ACME, "jc-3", { in: 1 }));
    await expectJobLimit(await createJob(worker, ACME, "jc-4"));

    // A one-off that ran is done: its slot is free once its session has told the tenant.
    await until(async () => {
      const res = await createJob(worker, ACME, "jc-4");
      await res.body?.cancel();
      return res.status === 201;
    }, `a slot after ${soon.id} ran`);
    await expectJobLimit(await createJob(worker, ACME, "jc-5"));

    // An erased session's jobs free theirs.
    const erased = await api(worker, ACME, "/v1/sessions/api.acme%3Ajc-2", { method: "DELETE" });
    assertStrictEquals(erased.status, 200, await erased.text());
    await created(await createJob(worker, ACME, "jc-5"));
    await expectJobLimit(await createJob(worker, ACME, "jc-6"));
  },
);

/**
 * "plan <text>" schedules <text> an hour from now with the tool; after the tool's result the
 * model says what the tool answered.
 */
function planner(req: FakeModelRequest): FakeModelStep {
  const last = req.body.messages.at(-1);
  if (last.role === "tool") return { kind: "text", text: `tool said: ${last.content}` };
  const plan = /^plan (.*)$/.exec(req.lastUserText);
  if (plan) {
    return { kind: "tool_call", name: "schedule_task", args: { prompt: plan[1], in: 3600 } };
  }
  return { kind: "text", text: `re: ${req.lastUserText}` };
}

baton.test(
  "MAX_JOBS_PER_TENANT: schedule_task past the tenant's cap is a tool error naming it, and no job; under it the model's job counts",
  async (worker, fake) => {
    fake.script(planner);
    const said = await chatReply(
      await chat(worker, "plan stretch", { session: "tc-1", key: GAMMA }),
    );
    assert(said.startsWith("tool said:"), said);
    assertEquals((await jobsIn(worker, GAMMA, "tc-1")).length, 1, said);
    await created(await createJob(worker, GAMMA, "tc-2"));
    await expectJobLimit(await createJob(worker, GAMMA, "tc-3"));

    const refused = await chatReply(
      await chat(worker, "plan water", { session: "tc-3", key: GAMMA }),
    );
    assert(refused.includes("MAX_JOBS_PER_TENANT (2)"), refused);
    assertEquals(await jobsIn(worker, GAMMA, "tc-3"), [], "no job for a refused call");
    // Another tenant's model schedules as usual.
    await chatReply(await chat(worker, "plan water", { session: "tc-3", key: DELTA }));
    assertEquals((await jobsIn(worker, DELTA, "tc-3")).length, 1);
  },
);

baton.done();

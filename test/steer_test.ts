// Steering a running turn in workerd: the runs API's steer endpoint and `/steer` in queue mode; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import {
  API_KEY,
  type Json,
  json,
  postJson,
  sendWebhook,
  until,
  untilQueued,
} from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { STEER_MARK } from "../lib/session/steers.ts";

// One Worker for the file (queue mode): each test in sessions of its own (steer-a, steer-b).
const baton = sharedBaton();

const auth = { authorization: `Bearer ${API_KEY}` };

const getRun = async (worker: TestWorker, id: string) =>
  json(await worker.fetch(`/v1/runs/${id}`, { headers: auth }));

async function startRun(worker: TestWorker, input: string, session: string): Promise<Json> {
  const res = await postJson(worker, "/v1/runs", { input, session });
  assertStrictEquals(res.status, 202);
  return json(res);
}

/** The SSE events' types of a run that has ended (the stream closes after its final event). */
async function eventTypes(worker: TestWorker, id: string): Promise<string[]> {
  const text = await (await worker.fetch(`/v1/runs/${id}/events`, { headers: auth })).text();
  return text.split("\n").filter((l) => l.startsWith("event: ")).map((l) => l.slice(7));
}

baton.test(
  "POST /v1/runs/{id}/steer gives its input to the run's turn (at its first step when queued), then 409 once the run has ended",
  async (worker, fake) => {
    fake.script(holdOn("steer blocker", "re "));
    await startRun(worker, "steer blocker", "steer-a");
    await fake.waitForRequests(1);
    const target = await startRun(worker, "target", "steer-a");
    const res = await postJson(worker, `/v1/runs/${target.run_id}/steer`, { input: "mind this" });
    assertStrictEquals(res.status, 202);
    const steer = await json(res);
    assertEquals(steer.status, "steering");
    fake.release();
    await until(async () => (await getRun(worker, target.run_id)).status === "completed");

    assertEquals(fake.requests.length, 2, "the steer got no turn of its own");
    const users = fake.requests[1].body.messages.filter((m: Json) => m.role === "user")
      .map((m: Json) => m.content);
    assertEquals(users.slice(-2), ["target", `${STEER_MARK}mind this`]);
    const run = await getRun(worker, target.run_id);
    assertEquals(run.output, `re ${STEER_MARK}mind this`);
    assertEquals((await getRun(worker, steer.steer_id)).output, run.output, "answered by that run");
    assert((await eventTypes(worker, target.run_id)).includes("run.steered"));

    const late = await postJson(worker, `/v1/runs/${target.run_id}/steer`, { input: "late" });
    assertStrictEquals(late.status, 409);
    const error = (await json(late)).error;
    assertEquals(error.type, "run_finished");
    assertMatch(error.message, new RegExp(`${target.run_id}.*completed`));
    const bad = await postJson(worker, `/v1/runs/${target.run_id}/steer`, { input: "" });
    assertStrictEquals(bad.status, 400);
  },
);

baton.test(
  "/steer in queue mode that comes after the running turn's last step is queued and answered as its own turn",
  async (worker, fake) => {
    fake.script(holdOn("steer slow", "re "));
    const hook = (text: string) =>
      sendWebhook(worker, { session: "steer-b", text }).then(async (res) => ({
        status: res.status,
        body: await json(res),
      }));
    const first = hook("steer slow");
    await fake.waitForRequests(1);
    const steer = hook("/steer Also This");
    await untilQueued(worker, "webhook:steer-b", 1);
    fake.release();
    assertEquals((await first).body.reply, "steer slow");
    assertEquals((await steer).body.reply, "re Also This");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["steer slow", "Also This"]);
  },
);

baton.done();

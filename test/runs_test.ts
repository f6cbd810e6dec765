// The runs API in workerd: durable events, live and late subscribers, stop, queued runs, delegate_task inline; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, type Json, json, sessionState, until } from "./_support/clients.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file: each test runs in sessions of its own (runs-a … runs-g).
const baton = sharedBaton();

const auth = { authorization: `Bearer ${API_KEY}` };

async function startRun(worker: TestWorker, input: string, session?: string): Promise<Json> {
  const res = await worker.fetch("/v1/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ input, ...(session ? { session } : {}) }),
  });
  assertStrictEquals(res.status, 202);
  return json(res);
}

const getRun = async (worker: TestWorker, id: string) =>
  json(await worker.fetch(`/v1/runs/${id}`, { headers: auth }));

/** Reads SSE frames as {event, data}; stops after `limit` data frames when given (then cancels). */
async function readEvents(
  res: Response,
  limit = Infinity,
): Promise<{ event: string; data: Json }[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const frames: { event: string; data: Json }[] = [];
  let buffered = "";
  while (frames.length < limit) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0 && frames.length < limit) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame.split("\n").find((l) => l.startsWith("data: "));
      if (!data) continue;
      const event = frame.split("\n").find((l) => l.startsWith("event: "))?.slice(7) ?? "";
      frames.push({ event, data: JSON.parse(data.slice(6)) });
    }
  }
  await reader.cancel();
  return frames;
}

/** First call: the tool; then a reply quoting the tool result. */
const toolThenText =
  (tool: string, args: Record<string, unknown>) => (req: FakeModelRequest): FakeModelStep => {
    const messages: { role: string; content: string }[] = req.body.messages;
    const last = messages.at(-1)!;
    return last.role === "tool"
      ? { kind: "text", text: `done: ${last.content}` }
      : { kind: "tool_call", name: tool, args };
  };

baton.test(
  "POST /v1/runs runs a turn; GET /v1/runs/{id} reports it; a late subscriber gets every event in order",
  async (worker, fake) => {
    fake.script(toolThenText("session_info", {}));
    const run = await startRun(worker, "who am i", "runs-a");
    assertMatch(run.run_id, /^run_/);
    assertEquals([run.session, run.status], ["runs-a", "queued"]);
    await until(async () => (await getRun(worker, run.run_id)).status === "completed", "completed");
    const state = await getRun(worker, run.run_id);
    assertMatch(state.output, /^done: \{"platform":"api","chat_id":"runs-a"/);
    const events = await readEvents(
      await worker.fetch(`/v1/runs/${run.run_id}/events`, { headers: auth }),
    );
    const types = events.map((e) => e.event);
    assertEquals(types.filter((t) => !t.startsWith("message.")), [
      "run.queued",
      "run.started",
      "tool.started",
      "tool.completed",
      "run.completed",
    ]);
    assert(types.includes("message.delta"));
    const started = events.find((e) => e.event === "tool.started")!.data;
    const completed = events.find((e) => e.event === "tool.completed")!.data;
    assertEquals([started.tool, completed.tool], ["session_info", "session_info"]);
    assertStrictEquals(started.call_id, completed.call_id);
    assertStrictEquals(typeof completed.duration_ms, "number");
    assertEquals(completed.error, undefined);
    assertEquals(events.at(-1)!.data.output, state.output);
    assertEquals(
      events.filter((e) => e.event === "message.delta").map((e) => e.data.delta).join(""),
      state.output,
    );
  },
);

baton.test(
  "GET /v1/runs/{id}/events keeps one subscriber whole while another disconnects mid-run",
  async (worker, fake) => {
    fake.script(() => ({ kind: "hold" }));
    const run = await startRun(worker, "slow work", "runs-b");
    await fake.waitForRequests(1);
    const steady = worker.fetch(`/v1/runs/${run.run_id}/events`, { headers: auth }).then((r) =>
      readEvents(r)
    );
    const leaving = await readEvents(
      await worker.fetch(`/v1/runs/${run.run_id}/events`, { headers: auth }),
      2,
    );
    assertEquals(leaving.map((e) => e.event), ["run.queued", "run.started"]);
    fake.release();
    const all = await steady;
    assertEquals(all.at(-1)!.event, "run.completed");
    assertEquals(all.at(-1)!.data.output, "slow work");
    assertEquals((await getRun(worker, run.run_id)).status, "completed");
    const session = await sessionState(worker, "api:runs-b");
    assertEquals([session.running, session.messages.length], [false, 2]);
  },
);

baton.test(
  "POST /v1/runs/{id}/stop ends a running run cancelled, and the session is free",
  async (worker, fake) => {
    fake.script((req) =>
      req.lastUserText === "forever" ? { kind: "hold" } : { kind: "text", text: "next ok" }
    );
    const run = await startRun(worker, "forever", "runs-c");
    await fake.waitForRequests(1);
    const events = worker.fetch(`/v1/runs/${run.run_id}/events`, { headers: auth }).then((r) =>
      readEvents(r)
    );
    const stop = await worker.fetch(`/v1/runs/${run.run_id}/stop`, {
      method: "POST",
      headers: auth,
    });
    assertEquals(await json(stop), { status: "stopping" });
    assertEquals((await getRun(worker, run.run_id)).status, "cancelled");
    assertEquals((await events).at(-1)!.event, "run.cancelled");
    const again = await worker.fetch(`/v1/runs/${run.run_id}/stop`, {
      method: "POST",
      headers: auth,
    });
    assertStrictEquals(again.status, 409);
    const next = await startRun(worker, "next", "runs-c");
    await until(async () => (await getRun(worker, next.run_id)).status === "completed", "next run");
  },
);

baton.test(
  "GET /v1/runs/{id} reports a run queued behind another as queued, then running",
  async (worker, fake) => {
    fake.script(() => ({ kind: "hold" }));
    const first = await startRun(worker, "first", "runs-d");
    await fake.waitForRequests(1);
    const second = await startRun(worker, "second", "runs-d");
    assertEquals((await getRun(worker, second.run_id)).status, "queued");
    assertEquals((await getRun(worker, first.run_id)).status, "running");
    fake.release();
    await fake.waitForRequests(2);
    assertEquals((await getRun(worker, second.run_id)).status, "running");
    fake.release();
    await until(
      async () => (await getRun(worker, second.run_id)).status === "completed",
      "second done",
    );
  },
);

baton.test("GET /v1/runs/{id} answers 404 for unknown and malformed ids", async (worker) => {
  for (const id of ["nope", "run_x_1", `run_${btoa("runs-e")}_99`, "run_!!_1"]) {
    const res = await worker.fetch(`/v1/runs/${id}`, { headers: auth });
    assertStrictEquals(res.status, 404, id);
    await res.body?.cancel();
  }
});

baton.test(
  "delegate_task with background:true runs inline in the turn and says so",
  async (worker, fake) => {
    fake.script((req) => {
      const messages: { role: string; content: string }[] = req.body.messages;
      if (req.lastUserText === "sub-goal") return { kind: "text", text: "child summary" };
      const last = messages.at(-1)!;
      if (last.role === "tool") return { kind: "text", text: last.content };
      return {
        kind: "tool_call",
        name: "delegate_task",
        args: { goal: "sub-goal", background: true },
      };
    });
    const run = await startRun(worker, "delegate please", "runs-f");
    await until(async () => (await getRun(worker, run.run_id)).status === "completed", "completed");
    const result = JSON.parse((await getRun(worker, run.run_id)).output);
    assertEquals(result.results[0].status, "completed");
    assertEquals(result.results[0].summary, "child summary");
    assertMatch(result.note, /Background execution is unavailable/);
    assert(!JSON.stringify(result).includes("dispatched"));
    const child = fake.requests.find((r) => r.lastUserText === "sub-goal")!;
    assertEquals(
      child.body.messages.map((m: { role: string }) => m.role),
      ["user"],
      "a fresh conversation",
    );
  },
);

baton.test(
  "POST /v1/chat/completions streams content deltas and never tool events",
  async (worker, fake) => {
    fake.script(toolThenText("session_info", {}));
    const res = await chat(worker, "stream with a tool", { session: "runs-g", stream: true });
    const text = await res.text();
    assert(!text.includes("tool."), "no tool event in the OpenAI stream");
    const data = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    assertStrictEquals(data.at(-1), "[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    for (const c of chunks) assertEquals(c.object, "chat.completion.chunk");
    assertMatch(
      chunks.map((c) => c.choices[0].delta.content ?? "").join(""),
      /^done: \{"platform":"api"/,
    );
    assert(fake.requests.every((r) => r.body.stream === true), "the model is streamed");
  },
);

baton.done();

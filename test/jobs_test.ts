// Scheduled turns end to end in workerd: the jobs API, a job the model schedules in Telegram, restarts around a fire; Deno + Miniflare.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, json, until, withBaton } from "./_support/clients.ts";
import type { FakeRequest, FakeStep } from "./_support/fake_llm.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const OTHER_KEY = "beta-key-0123456789";
const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";
const TG = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };

// One Worker for the file (two jobs per session at most, a second tenant, Telegram), each test in
// sessions of its own; the restarts and the pairing policy start their own.
const baton = sharedBaton({
  vars: { MAX_JOBS_PER_SESSION: "2", GATEWAY_API_KEYS: `beta:${OTHER_KEY}`, ...TG },
});

function api(worker: TestWorker, path: string, init: RequestInit = {}, key = API_KEY) {
  return worker.fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
}

const createJob = (worker: TestWorker, body: unknown, key = API_KEY) =>
  api(worker, "/v1/jobs", { method: "POST", body: JSON.stringify(body) }, key);

const getJob = async (worker: TestWorker, id: string): Promise<Json> =>
  json(await api(worker, `/v1/jobs/${id}`));

/** Waits until job `id` has `n` finished runs; returns the job. */
async function untilRuns(worker: TestWorker, id: string, n: number): Promise<Json> {
  let job: Json = null;
  await until(async () => {
    job = await getJob(worker, id);
    return job.last_runs?.filter((r: Json) => r.status === "completed").length >= n;
  }, `${n} runs of ${id}`);
  return job;
}

baton.test(
  "POST /v1/jobs fires a one-off job once in its API session; the run is readable and in last_runs",
  async (worker, fake) => {
    const res = await createJob(worker, {
      session: "jobs-a",
      prompt: "hello later",
      schedule: { in: 1 },
    });
    const job = await json(res);
    assertStrictEquals(res.status, 201, JSON.stringify(job));
    assertEquals([job.session, job.status, job.schedule], ["jobs-a", "active", {
      at: job.next_run_at,
    }]);
    const done = await untilRuns(worker, job.id, 1);
    assertEquals(done.status, "done");
    const run = await json(await api(worker, `/v1/runs/${done.last_runs[0].run_id}`));
    assertEquals([run.status, run.output, run.session], ["completed", "hello later", "jobs-a"]);
    await pause(1_500);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["hello later"]);
    const list = await json(await api(worker, "/v1/jobs?session=jobs-a"));
    assertEquals(list.data.map((j: Json) => j.id), [job.id]);
  },
);

baton.test(
  "POST /v1/jobs refuses bad schedules and a job past MAX_JOBS_PER_SESSION with 400, storing nothing",
  async (worker, fake) => {
    const bad = [
      { cron: "61 * * * *" },
      { cron: "0 9 * * *", tz: "Nowhere/Atlantis" },
      { every: 30 },
      { at: "2001-01-01T00:00:00Z" },
      { at: "2030-01-01T00:00:00Z", every: 60 },
      { weekly: true },
    ];
    for (const schedule of bad) {
      const res = await createJob(worker, { session: "jobs-b", prompt: "x", schedule });
      const body = await json(res);
      assertStrictEquals(res.status, 400, `${JSON.stringify(schedule)} → ${JSON.stringify(body)}`);
      assertMatch(body.error.message, /\S/);
    }
    for (const n of [1, 2]) {
      const ok = await createJob(worker, {
        session: "jobs-b",
        prompt: `p${n}`,
        schedule: { every: 3600 },
      });
      assertStrictEquals(ok.status, 201);
    }
    const third = await createJob(worker, {
      session: "jobs-b",
      prompt: "p3",
      schedule: { every: 3600 },
    });
    assertEquals([third.status, (await json(third)).error.message], [
      400,
      "this session has 2 jobs already (the limit)",
    ]);
    const list = await json(await api(worker, "/v1/jobs?session=jobs-b"));
    assertEquals(list.data.map((j: Json) => j.prompt), ["p1", "p2"]);
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "/v1/jobs/{id}: another tenant's job is 404; pause, resume, run now and delete take effect",
  async (worker, fake) => {
    const job = await json(
      await createJob(worker, { session: "jobs-c", prompt: "hourly", schedule: { every: 3600 } }),
    );
    assertStrictEquals((await api(worker, `/v1/jobs/${job.id}`, {}, OTHER_KEY)).status, 404);
    const other = await createJob(worker, {
      session: "telegram:42",
      prompt: "x",
      schedule: { every: 3600 },
    }, OTHER_KEY);
    assertStrictEquals(other.status, 404, "a platform session needs an admin key");
    const paused = await json(await api(worker, `/v1/jobs/${job.id}/pause`, { method: "POST" }));
    assertEquals(paused.status, "paused");
    const resumed = await json(await api(worker, `/v1/jobs/${job.id}/resume`, { method: "POST" }));
    assertEquals(resumed.status, "active");
    const ran = await api(worker, `/v1/jobs/${job.id}/run`, { method: "POST" });
    assertStrictEquals(ran.status, 202);
    await untilRuns(worker, job.id, 1);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["hourly"]);
    const gone = await api(worker, `/v1/jobs/${job.id}`, { method: "DELETE" });
    assertEquals(await json(gone), { id: job.id, deleted: true });
    assertStrictEquals((await api(worker, `/v1/jobs/${job.id}`)).status, 404);
  },
);

const _forum = { id: -1001234567890, type: "supergroup", title: "Builders", is_forum: true };
let _update = 700_000;

/** A Telegram message from user 42 in `chat`; `ack` is the acknowledgement expected (default `{ok: true}`). */
async function tgSay(
  worker: TestWorker,
  chat: Json,
  text: string,
  thread?: number,
  ack: Json = { ok: true },
) {
  const message = {
    message_id: _update,
    date: Math.floor(Date.now() / 1000),
    chat,
    from: { id: 42, is_bot: false, first_name: "Alice" },
    text,
    ...(thread ? { message_thread_id: thread, is_topic_message: true } : {}),
  };
  await expectOk(
    await worker.fetch("/webhooks/telegram", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
      body: JSON.stringify({ update_id: _update++, message }),
    }),
    ack,
  );
}

/**
 * "remind <text>" schedules <text> in a second with the tool; a job's prompt ("job …") calls
 * session_info and answers with what it returned (the context its turn was bound to).
 */
function scheduler(req: FakeRequest): FakeStep {
  const last = req.body.messages.at(-1);
  const text = req.lastUserText;
  if (last.role === "tool") {
    return { kind: "text", text: text.startsWith("job") ? `ctx ${last.content}` : "scheduled" };
  }
  const remind = /^remind (.*)$/.exec(text);
  if (remind) {
    return { kind: "tool_call", name: "schedule_task", args: { prompt: remind[1], in: 1 } };
  }
  if (text.startsWith("job")) return { kind: "tool_call", name: "session_info", args: {} };
  return { kind: "text", text: `re: ${text}` };
}

baton.test(
  "schedule_task: a job the model schedules from a Telegram topic fires there, bound to its own chat, thread and job",
  async (worker, fake, telegram) => {
    fake.script(scheduler);
    await tgSay(worker, _forum, "remind job one", 7);
    await tgSay(worker, { id: 555, type: "private", first_name: "Bob" }, "remind job two");
    await telegram.waitForCalls(4);
    await pause(800);
    const sent = telegram.calls.map((c) => ({
      chat: c.body.chat_id,
      thread: c.body.message_thread_id,
      text: String(c.body.text),
    }));
    const replies = sent.filter((s) => s.text.startsWith("ctx "));
    assertStrictEquals(replies.length, 2, JSON.stringify(sent));
    for (const reply of replies) {
      const ctx = JSON.parse(reply.text.slice(4));
      assertEquals(ctx.chat_id, String(reply.chat), "each job in its own chat");
      assertMatch(ctx.job_id, /^\d+$/);
      assertEquals(ctx.async_delivery, false);
      if (reply.chat === _forum.id) assertEquals([reply.thread, ctx.thread_id], [7, "7"]);
    }
    assertEquals(sent.filter((s) => s.text === "scheduled").length, 2);
  },
);

Deno.test("SessionDO fires a job due while the runtime was down once after the restart, and never again", async () => {
  const dir = await tempPersistDir();
  try {
    let id = "";
    await withBaton(async (worker) => {
      const res = await createJob(worker, {
        session: "jobs-k",
        prompt: "after the outage",
        schedule: { in: 1 },
      });
      id = (await json(res)).id;
    }, { persistDir: dir.path });
    await pause(1_500); // due while nothing runs
    await withBaton(async (worker, fake) => {
      const job = await untilRuns(worker, id, 1);
      assertEquals(job.last_runs.length, 1);
      await pause(1_000);
      assertEquals(fake.requests.map((r) => r.lastUserText), ["after the outage"]);
    }, { persistDir: dir.path });
    await withBaton(async (worker, fake) => {
      await pause(1_000);
      assertEquals((await getJob(worker, id)).last_runs.length, 1);
      assertStrictEquals(fake.requests.length, 0, "fired once, not again on the next start");
    }, { persistDir: dir.path });
  } finally {
    await dir.cleanup();
  }
});

Deno.test("SessionDO killed while a job's turn runs reruns that occurrence's message after the restart: one run, one occurrence", async () => {
  const dir = await tempPersistDir();
  const vars = { TURN_LEASE_MS: "300" };
  try {
    let id = "";
    await withBaton(async (worker, fake) => {
      fake.script(() => ({ kind: "hold" }));
      const res = await createJob(worker, {
        session: "jobs-d",
        prompt: "cut off",
        schedule: { in: 1 },
      });
      id = (await json(res)).id;
      await fake.waitForRequests(1);
    }, { persistDir: dir.path, vars });
    await withBaton(async (worker) => {
      const job = await untilRuns(worker, id, 1);
      assertEquals([job.last_runs.length, job.status], [1, "done"]);
      const run = await json(await api(worker, `/v1/runs/${job.last_runs[0].run_id}`));
      assertEquals(run.output, "cut off");
    }, { persistDir: dir.path, vars });
  } finally {
    await dir.cleanup();
  }
});

Deno.test("SessionDO removes a job whose creator's pairing was revoked before it was due; nothing is sent", async () => {
  await withPlatform({ ...TG, ACCESS_POLICY: "pairing" }, async (worker, fake, telegram) => {
    fake.script((req) => {
      const last = req.body.messages.at(-1);
      if (last.role === "tool") return { kind: "text", text: "scheduled" };
      if (req.lastUserText === "remind later") {
        return { kind: "tool_call", name: "schedule_task", args: { prompt: "job late", in: 3 } };
      }
      return { kind: "text", text: `re: ${req.lastUserText}` };
    });
    const dm = { id: 42, type: "private", first_name: "Alice" };
    await tgSay(worker, dm, "hello", undefined, { ok: true, ignored: "sender not allowed" });
    await telegram.waitForCalls(1);
    const code = /pairing code to its owner: ([A-Z2-9]{8})/.exec(telegram.calls[0].body.text)?.[1];
    const approved = await api(worker, `/v1/access/pairings/${code}/approve`, { method: "POST" });
    assertStrictEquals(approved.status, 200);
    await tgSay(worker, dm, "remind later");
    await until(
      () => Promise.resolve(telegram.calls.some((c) => c.body.text === "scheduled")),
      "scheduled",
    );
    const revoked = await api(worker, `/v1/access/users/${encodeURIComponent("telegram:42")}`, {
      method: "DELETE",
    });
    assertStrictEquals(revoked.status, 200);
    await pause(4_500); // past the job's time
    assertEquals(fake.requests.filter((r) => r.lastUserText === "job late").length, 0);
    const jobs = await json(
      await api(worker, `/v1/jobs?session=${encodeURIComponent("telegram:42")}`),
    );
    assertEquals(jobs.data, [], "the job is gone");
  });
});

baton.done();

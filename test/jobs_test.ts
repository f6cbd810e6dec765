// Scheduled turns end to end in workerd: the jobs API, a job the model schedules in Telegram, restarts around a fire; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, json, until, withBaton } from "./_support/clients.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
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

baton.test(
  "POST /v1/jobs/{id}/resume of a one-off job paused past its time runs it once, late, saying so; done after",
  async (worker, fake) => {
    const job = await json(
      await createJob(worker, { session: "jobs-r", prompt: "stretch now", schedule: { in: 2 } }),
    );
    const paused = await json(await api(worker, `/v1/jobs/${job.id}/pause`, { method: "POST" }));
    assertEquals(paused.status, "paused");
    await pause(3_000); // past its time, paused
    assertStrictEquals(fake.requests.length, 0, "paused: nothing ran at its time");
    const resumed = await api(worker, `/v1/jobs/${job.id}/resume`, { method: "POST" });
    assertStrictEquals(resumed.status, 200);
    const done = await untilRuns(worker, job.id, 1);
    assertEquals([done.status, done.next_run_at, done.last_runs.length], ["done", null, 1]);
    const again = await api(worker, `/v1/jobs/${job.id}/resume`, { method: "POST" });
    assertStrictEquals(again.status, 409, "a repeated resume: the job is done");
    await pause(1_000);
    const asked = fake.requests.map((r) => r.lastUserText);
    assertStrictEquals(asked.length, 1, JSON.stringify(asked));
    assertEquals(
      asked[0],
      `(Scheduled for ${job.next_run_at}; running late, paused past its time, then resumed.) stretch now`,
    );
    const run = await json(await api(worker, `/v1/runs/${done.last_runs[0].run_id}`));
    assertEquals([run.status, run.output], ["completed", asked[0]]);
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
function scheduler(req: FakeModelRequest): FakeModelStep {
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
    await telegram.waitForCalls(6); // per chat: the job's announcement, "scheduled", the job's reply
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

Deno.test("SessionDO: a one-off job resumed past its time with restarts around the resume runs once, late", async () => {
  const dir = await tempPersistDir();
  try {
    let id = "";
    await withBaton(async (worker) => {
      const res = await createJob(worker, {
        session: "jobs-rr",
        prompt: "late one",
        schedule: {
          in: 1,
        },
      });
      id = (await json(res)).id;
      assertStrictEquals(
        (await api(worker, `/v1/jobs/${id}/pause`, { method: "POST" })).status,
        200,
      );
    }, { persistDir: dir.path });
    await pause(1_500); // its time passes while paused and nothing runs
    await withBaton(async (worker) => {
      const res = await api(worker, `/v1/jobs/${id}/resume`, { method: "POST" });
      assertStrictEquals(res.status, 200); // the runtime stops right after
    }, { persistDir: dir.path });
    await withBaton(async (worker, fake) => {
      const job = await untilRuns(worker, id, 1);
      assertEquals([job.status, job.last_runs.length], ["done", 1]);
      const run = await json(await api(worker, `/v1/runs/${job.last_runs[0].run_id}`));
      assertMatch(
        run.output,
        /^\(Scheduled for .*; running late, paused past its time.*\) late one$/,
      );
      const again = await api(worker, `/v1/jobs/${id}/resume`, { method: "POST" });
      assertStrictEquals(again.status, 409);
      await pause(1_000);
      assertEquals(fake.requests.filter((r) => !r.lastUserText.endsWith("late one")), []);
      assertEquals((await getJob(worker, id)).last_runs.length, 1, "one occurrence, one run");
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

/**
 * "every <text>" schedules <text> every 60 s with the tool, "once <text>" in an hour; after a
 * tool result the model says "scheduled".
 */
function recurring(req: FakeModelRequest): FakeModelStep {
  if (req.body.messages.at(-1).role === "tool") return { kind: "text", text: "scheduled" };
  const [, how, prompt] = /^(every|once) (.*)$/.exec(req.lastUserText) ?? [];
  if (how === "every") {
    return { kind: "tool_call", name: "schedule_task", args: { prompt, every: 60 } };
  }
  if (how === "once") {
    return { kind: "tool_call", name: "schedule_task", args: { prompt, in: 3600 } };
  }
  return { kind: "text", text: `re: ${req.lastUserText}` };
}

baton.test(
  "schedule_task: a recurring job the model schedules waits for the chat user's approval and is announced; a one-off is created without asking",
  async (worker, fake, telegram) => {
    fake.script(recurring);
    const chat = { id: 4260, type: "private", first_name: "Alice" };
    const jobsOf = async (): Promise<Json[]> =>
      (await json(await api(worker, `/v1/jobs?session=${encodeURIComponent("telegram:4260")}`)))
        .data;
    const texts = () => telegram.calls.map((c) => String(c.body.text));

    await tgSay(worker, chat, "every ping the server");
    await until(() => Promise.resolve(texts().length > 0), "the turn's first message");
    assertMatch(texts()[0], /^Approval needed: schedule_task .*"every":60/, texts().join(" | "));
    assertEquals(await jobsOf(), [], "no job before the user approves");

    await tgSay(worker, chat, "yes");
    await until(() => Promise.resolve(texts().includes("scheduled")), "the resumed turn's reply");
    const [job] = await jobsOf();
    assertEquals([job?.prompt, job?.schedule.every], ["ping the server", 60]);
    const announced = texts().filter((t) => t.startsWith("Scheduled task"));
    assertStrictEquals(announced.length, 1, texts().join(" | "));
    assertMatch(announced[0], /^Scheduled task #\d+ \(every 60 s\): ping the server\n.*cancel/s);

    await tgSay(worker, chat, "once stretch");
    await until(async () => (await jobsOf()).length === 2, "the one-off job");
    await until(
      () => Promise.resolve(texts().filter((t) => t.startsWith("Scheduled task")).length === 2),
      "the one-off's announcement",
    );
    assertEquals(texts().filter((t) => t.startsWith("Approval needed")).length, 1, "asked once");
  },
);

baton.done();

// A second Worker with quotas: API_TURNS_PER_MINUTE=3 (each test with a tenant of its own, the
// minute is counted for as long as the Worker runs) and USER_TURNS_PER_HOUR=2 (each test with a
// Telegram user of its own).
const quota = sharedBaton({
  vars: {
    ...TG,
    API_TURNS_PER_MINUTE: "3",
    USER_TURNS_PER_HOUR: "2",
    GATEWAY_API_KEYS: "q-run:q-run-key-1,q-fire:q-fire-key-1,q-resume:q-resume-key-1",
  },
  label: "quotas",
});

quota.test(
  "POST /v1/jobs/{id}/run counts against API_TURNS_PER_MINUTE: the fourth within the minute is 429 rate_limited and starts no model call",
  async (worker, fake) => {
    const key = "q-run-key-1";
    const job = await json(
      await createJob(
        worker,
        { session: "q-run", prompt: "run me", schedule: { every: 3600 } },
        key,
      ),
    );
    const run = () => api(worker, `/v1/jobs/${job.id}/run`, { method: "POST" }, key);
    for (let i = 0; i < 3; i++) {
      const ran = await run();
      assertStrictEquals(ran.status, 202, `run ${i + 1}`);
      await ran.body?.cancel();
    }
    const over = await run();
    const body = await json(over);
    assertStrictEquals(over.status, 429, `the fourth run: ${JSON.stringify(body)}`);
    assertEquals(body.error.type, "rate_limited");
    assertMatch(body.error.message, /API_TURNS_PER_MINUTE \(3\)/);
    const wait = Number(over.headers.get("retry-after"));
    assertStrictEquals(wait >= 1 && wait <= 60, true, `Retry-After ${wait}`);
    await untilRuns(worker, job.id, 3);
    await pause(1_000);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["run me", "run me", "run me"]);
    assertStrictEquals((await getJobWith(worker, job.id, key)).last_runs.length, 3);
  },
);

quota.test(
  "POST /v1/jobs/{id}/resume of a one-off job past its time counts like a run: over API_TURNS_PER_MINUTE it is 429 and the job stays paused",
  async (worker, fake) => {
    const key = "q-resume-key-1";
    const job = await json(
      await createJob(
        worker,
        { session: "q-resume", prompt: "late one", schedule: { in: 2 } },
        key,
      ),
    );
    const paused = await api(worker, `/v1/jobs/${job.id}/pause`, { method: "POST" }, key);
    assertStrictEquals(paused.status, 200);
    await paused.body?.cancel();
    // The tenant's minute used up by three turns of another session, while the job's time passes.
    for (let i = 0; i < 3; i++) {
      const res = await api(worker, "/v1/runs", {
        method: "POST",
        body: JSON.stringify({ input: `busy ${i}`, session: "q-resume-chat" }),
      }, key);
      assertStrictEquals(res.status, 202, `turn ${i}`);
      await res.body?.cancel();
    }
    await pause(2_500);
    const over = await api(worker, `/v1/jobs/${job.id}/resume`, { method: "POST" }, key);
    const body = await json(over);
    assertStrictEquals(over.status, 429, JSON.stringify(body));
    assertEquals(body.error.type, "rate_limited");
    await pause(500);
    assert(!fake.requests.some((r) => r.lastUserText.includes("late one")), "the job never ran");
    assertStrictEquals((await getJobWith(worker, job.id, key)).status, "paused");
  },
);

quota.test(
  "SessionDO skips a job's occurrence while its tenant is over API_TURNS_PER_MINUTE: the run fails rate_limited, no model call",
  async (worker, fake) => {
    const key = "q-fire-key-1";
    for (let i = 0; i < 3; i++) {
      const res = await api(worker, "/v1/runs", {
        method: "POST",
        body: JSON.stringify({ input: `turn ${i}`, session: "q-fire-chat" }),
      }, key);
      assertStrictEquals(res.status, 202, `turn ${i}`);
      await res.body?.cancel();
    }
    const job = await json(
      await createJob(
        worker,
        { session: "q-fire", prompt: "over quota", schedule: { in: 1 } },
        key,
      ),
    );
    let done: Json = null;
    await until(
      async () => {
        done = await getJobWith(worker, job.id, key);
        return done.last_runs.length === 1 && done.last_runs[0].status !== "queued" &&
          done.last_runs[0].status !== "running";
      },
      "the occurrence settled",
      30_000,
    );
    await pause(1_000);
    assertEquals(
      fake.requests.map((r) => r.lastUserText).filter((t) => t === "over quota"),
      [],
      "no model call for the skipped occurrence",
    );
    assertEquals([done.status, done.last_runs[0].status], ["done", "failed"]);
    const run = await json(await api(worker, `/v1/runs/${done.last_runs[0].run_id}`, {}, key));
    assertEquals([run.status, run.error?.type], ["failed", "rate_limited"]);
    assertMatch(run.error.message, /API_TURNS_PER_MINUTE \(3\)/);
  },
);

let _quotaUpdate = 990_000;

/** A Telegram message from `user` in their private chat. */
async function tgFrom(worker: TestWorker, user: number, text: string) {
  const message = {
    message_id: _quotaUpdate,
    date: Math.floor(Date.now() / 1000),
    chat: { id: user, type: "private", first_name: `User${user}` },
    from: { id: user, is_bot: false, first_name: `User${user}` },
    text,
  };
  await expectOk(
    await worker.fetch("/webhooks/telegram", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
      body: JSON.stringify({ update_id: _quotaUpdate++, message }),
    }),
  );
}

quota.test(
  "SessionDO skips a schedule_task job's occurrence once its Telegram creator is over USER_TURNS_PER_HOUR, and tells the chat",
  async (worker, fake, telegram) => {
    fake.script(scheduler);
    const user = 4343;
    await tgFrom(worker, user, "remind job skipped"); // turn 1 of 2: schedules "job skipped" in 1 s
    await tgFrom(worker, user, "hello"); // turn 2 of 2
    const session = encodeURIComponent(`telegram:${user}`);
    const settled = (j: Json) => ["completed", "failed"].includes(j.last_runs[0]?.status);
    await until(
      async () => {
        const jobs = await json(await api(worker, `/v1/jobs?session=${session}`));
        return jobs.data?.length === 1 && settled(jobs.data[0]);
      },
      "the job's occurrence settled",
      30_000,
    ); // a job due in 1 s, on a loaded lane
    await pause(1_000);
    assertEquals(
      fake.requests.map((r) => r.lastUserText).filter((t) => t === "job skipped"),
      [],
      "the job's turn did not run",
    );
    const texts = telegram.calls.map((c) => String(c.body.text));
    assertEquals(
      texts.filter((t) => /scheduled task was skipped/.test(t)).length,
      1,
      texts.join(" | "),
    );
    assertMatch(texts.find((t) => /scheduled task was skipped/.test(t))!, /2 turns per hour/);
    const jobs = await json(await api(worker, `/v1/jobs?session=${session}`));
    assertEquals(jobs.data.map((j: Json) => [j.status, j.last_runs[0]?.status]), [[
      "done",
      "failed",
    ]]);
  },
);

const getJobWith = async (worker: TestWorker, id: string, key: string): Promise<Json> =>
  json(await api(worker, `/v1/jobs/${id}`, {}, key));

quota.done();

// Unit tests of scheduled jobs in the session core (lib/session/job_scheduler.ts, jobs.ts) over node:sqlite, on a controlled clock; Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { parseCommand, type ReplyChannel, type ReplyTarget } from "../chat/mod.ts";
import { currentContext } from "../runtime/mod.ts";
import { type JobOrigin, type JobSpec, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { currentTurnJobs } from "./turn_jobs.ts";

const T0 = Date.parse("2026-03-01T12:00:00Z");
const API: JobOrigin = {
  target: null,
  context: { session_key: "api:j", platform: "api", chat_id: "j" },
};

/** A sentinel on `storage` whose clock is `clock.now`; the drain runs only from `alarm()`. */
function sentinelAt(
  clock: { now: number },
  storage = sqliteStorage(),
  execute: TurnExecutor = recordingExecutor().execute,
  channel?: ReplyChannel,
) {
  const sentinel = new SessionSentinel(storage, execute, {
    ...options,
    now: () => clock.now,
    ...(channel ? { channel } : {}),
  });
  return { sentinel, storage };
}

function create(sentinel: SessionSentinel, spec: JobSpec, origin = API) {
  const made = sentinel.withJobs((jobs, tx) => jobs.create(tx, spec, origin));
  if ("error" in made) throw new Error(made.error);
  return made.job;
}

const runsOf = (sentinel: SessionSentinel, id: number) =>
  sentinel.withJobs((jobs) => jobs.view(id)!.last_runs);

Deno.test("JobScheduler fires a one-off job once, however often the alarm fires and across a restart", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const first = sentinelAt(clock, sqliteStorage(), exec.execute);
  const job = create(first.sentinel, { prompt: "stretch", schedule: { in: 60 } });
  await first.sentinel.alarm();
  assertEquals(exec.state.order, [], "not due yet");
  clock.now += 60_000;
  await first.sentinel.alarm();
  await first.sentinel.alarm();
  const restarted = sentinelAt(clock, first.storage, exec.execute);
  await restarted.sentinel.alarm();
  assertEquals(exec.state.order, ["stretch"]);
  const view = restarted.sentinel.withJobs((jobs) => jobs.view(job.id)!);
  assertEquals([view.status, view.next_run_at, view.last_runs.length], ["done", null, 1]);
  assertEquals(view.last_runs[0].status, "completed");
});

Deno.test("JobScheduler fires an every-minute job on time, N times in N minutes", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const { sentinel } = sentinelAt(clock, sqliteStorage(), exec.execute);
  const job = create(sentinel, { prompt: "tick", schedule: { every: 60 } });
  for (let minute = 1; minute <= 5; minute++) {
    clock.now = T0 + minute * 60_000;
    await sentinel.alarm();
    await sentinel.alarm(); // a repeated alarm fires nothing more
  }
  assertEquals(exec.state.order, ["tick", "tick", "tick", "tick", "tick"]);
  assertEquals(runsOf(sentinel, job.id).length, 5);
  const next = sentinel.withJobs((jobs) => jobs.view(job.id)!.next_run_at);
  assertEquals(next, new Date(T0 + 6 * 60_000).toISOString());
});

Deno.test("JobScheduler runs occurrences missed in an outage once, saying it is late, then keeps the schedule", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const { sentinel } = sentinelAt(clock, sqliteStorage(), exec.execute);
  const job = create(sentinel, { prompt: "report", schedule: { every: 60 } });
  clock.now = T0 + 10 * 60_000 + 30_000; // ten occurrences came and went
  await sentinel.alarm();
  assertEquals(exec.state.order.length, 1);
  assertMatch(
    exec.state.order[0],
    /^\(Scheduled for 2026-03-01T12:01:00.000Z; running late.*\) report$/,
  );
  const next = sentinel.withJobs((jobs) => jobs.view(job.id)!.next_run_at);
  assertEquals(next, new Date(T0 + 11 * 60_000).toISOString());
  clock.now = T0 + 11 * 60_000;
  await sentinel.alarm();
  assertEquals(exec.state.order.at(-1), "report", "on time again, not late");
});

Deno.test("JobScheduler queues a job due while a turn runs behind it, never beside it", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const hold = exec.hold("long");
  const { sentinel } = sentinelAt(clock, sqliteStorage(), exec.execute);
  create(sentinel, { prompt: "due", schedule: { in: 60 } });
  const long = sentinel.submit({ text: "long", context: { session_key: "api:j" } });
  const draining = sentinel.alarm();
  await new Promise((r) => setTimeout(r, 10));
  clock.now += 60_000;
  await sentinel.alarm(); // the watchdog's alarm while the turn runs
  hold.resolve();
  await draining;
  await sentinel.outcome(long.seq);
  assertEquals(exec.state.order, ["long", "due"]);
  assertStrictEquals(exec.state.peak, 1);
});

Deno.test("JobScheduler: a pause or a cancel takes effect before the next occurrence; resume continues", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const { sentinel } = sentinelAt(clock, sqliteStorage(), exec.execute);
  const paused = create(sentinel, { prompt: "paused", schedule: { every: 60 } });
  const cancelled = create(sentinel, { prompt: "cancelled", schedule: { every: 60 } });
  sentinel.withJobs((jobs, tx) => jobs.setPaused(tx, paused.id, true));
  sentinel.withJobs((jobs, tx) => jobs.remove(tx, cancelled.id));
  clock.now = T0 + 60_000;
  await sentinel.alarm();
  assertEquals(exec.state.order, []);
  sentinel.withJobs((jobs, tx) => jobs.setPaused(tx, paused.id, false));
  clock.now = T0 + 120_000;
  await sentinel.alarm();
  assertEquals(exec.state.order, ["paused"]);
  assertEquals(sentinel.withJobs((jobs) => jobs.view(cancelled.id)), null);
});

Deno.test("JobScheduler.apply() resume of a one-off job paused past its time runs it once, late, saying so; a repeat or a restart never runs it again", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const first = sentinelAt(clock, sqliteStorage(), exec.execute);
  const job = create(first.sentinel, { prompt: "stretch", schedule: { in: 60 } });
  const resume = (sentinel: SessionSentinel) =>
    sentinel.withJobs((jobs, tx) => jobs.apply(tx, { op: "resume", id: job.id }, "api:j"));
  first.sentinel.withJobs((jobs, tx) => jobs.setPaused(tx, job.id, true));
  clock.now = T0 + 62_000; // 2 s past its time: under lateAfterMs, still late (it was paused)
  await first.sentinel.alarm();
  assertEquals(exec.state.order, [], "paused: nothing runs at its time");
  const answer = resume(first.sentinel);
  assertEquals("job" in answer && [answer.job.status, answer.job.last_runs.length], ["done", 1]);
  // A restart right after the resume: its transaction stored the run, which the next drain runs.
  const restarted = sentinelAt(clock, first.storage, exec.execute);
  await restarted.sentinel.alarm();
  await first.sentinel.alarm();
  assertEquals(resume(restarted.sentinel), { error: "the job is done", status: 409 });
  await restarted.sentinel.alarm();
  assertEquals(exec.state.order.length, 1, JSON.stringify(exec.state.order));
  assertMatch(
    exec.state.order[0],
    /^\(Scheduled for 2026-03-01T12:01:00\.000Z; running late, .*paused.*\) stretch$/,
  );
  const view = restarted.sentinel.withJobs((jobs) => jobs.view(job.id)!);
  assertEquals([view.status, view.next_run_at, view.last_runs.length], ["done", null, 1]);
  assertEquals(view.last_runs[0].status, "completed");
});

Deno.test("JobScheduler.setPaused() resume of a one-off job before its time keeps it due then, on time", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const { sentinel } = sentinelAt(clock, sqliteStorage(), exec.execute);
  const job = create(sentinel, { prompt: "later", schedule: { in: 60 } });
  sentinel.withJobs((jobs, tx) => jobs.setPaused(tx, job.id, true));
  clock.now = T0 + 30_000;
  sentinel.withJobs((jobs, tx) => jobs.setPaused(tx, job.id, false));
  await sentinel.alarm();
  assertEquals(exec.state.order, [], "not due yet");
  clock.now = T0 + 60_000;
  await sentinel.alarm();
  assertEquals(exec.state.order, ["later"], "on time, not late");
});

Deno.test("JobScheduler refuses a bad schedule and the job past MAX_JOBS, storing nothing", () => {
  const clock = { now: T0 };
  const storage = sqliteStorage();
  const sentinel = new SessionSentinel(storage, recordingExecutor().execute, {
    ...options,
    maxJobs: 2,
    now: () => clock.now,
  });
  const made = (spec: JobSpec) => sentinel.withJobs((jobs, tx) => jobs.create(tx, spec, API));
  assertMatch(JSON.stringify(made({ prompt: "x", schedule: { every: 30 } })), /at least 60/);
  assertMatch(JSON.stringify(made({ prompt: " ", schedule: { in: 60 } })), /empty/);
  made({ prompt: "a", schedule: { in: 60 } });
  made({ prompt: "b", schedule: { in: 60 } });
  assertMatch(JSON.stringify(made({ prompt: "c", schedule: { in: 60 } })), /the limit/);
  assertEquals(sentinel.withJobs((jobs) => jobs.list().map((j) => j.prompt)), ["a", "b"]);
});

Deno.test("JobScheduler: a job the turn's tool creates replies in that chat, bound to its context and job", async () => {
  const clock = { now: T0 };
  const targets: { target: ReplyTarget; text: string }[] = [];
  const channel: ReplyChannel = {
    split: (_t, text) => [text],
    send: (target, text, part) => {
      part.leaving?.();
      targets.push({ target, text });
      return Promise.resolve({ ok: true });
    },
    inDoubt: () => Promise.resolve("resend_marked"),
  };
  const seen: Record<string, unknown>[] = [];
  // The turn runner binds the turn's frame (its context, its jobs): the executor binds nothing.
  const execute: TurnExecutor = (message) =>
    (async () => {
      seen.push({ ...currentContext() });
      if (message.text === "remind me") {
        const made = await currentTurnJobs()!.create({
          prompt: "drink water",
          schedule: { in: 60 },
        });
        if ("error" in made) throw new Error(made.error);
      }
      const reply = `re: ${message.text}`;
      const messages = [{ role: "user" as const, content: message.text }, {
        role: "assistant" as const,
        content: reply,
      }];
      return { reply, messages, usage: { prompt_tokens: 0, completion_tokens: 0 } };
    })();
  const { sentinel } = sentinelAt(clock, sqliteStorage(), execute, channel);
  const target = { platform: "telegram", chat_id: 7, message_thread_id: 3, message_id: 99 };
  const context = {
    session_key: "telegram:7:3",
    platform: "telegram",
    chat_id: "7",
    thread_id: "3",
    user_id: "42",
    message_id: "99",
  };
  sentinel.submit({ text: "remind me", context, reply: target, command: null });
  await sentinel.alarm();
  clock.now += 60_000;
  await sentinel.alarm();
  // The chat is told of the job by baton itself (a notice stored with it), not only by the model.
  const announced = (t: { text: string }) => t.text.startsWith("Scheduled task");
  assertEquals(targets.filter(announced).map((t) => [t.text, t.target]), [[
    `Scheduled task #1 (once at ${new Date(T0 + 60_000).toISOString()}): drink water\n` +
    "To cancel it, ask me to cancel task #1; /jobs lists this chat's tasks.",
    target,
  ]]);
  assertEquals(targets.filter((t) => !announced(t)).map((t) => [t.text, t.target]), [
    ["re: remind me", target],
    ["re: drink water", target],
  ]);
  const jobTurn = seen[1];
  assertEquals(
    [jobTurn.chat_id, jobTurn.thread_id, jobTurn.user_id, jobTurn.job_id, jobTurn.async_delivery],
    ["7", "3", "42", "1", false],
  );
  assertMatch(String(jobTurn.message_id), /^job:1:\d+$/);
  assertEquals(
    sentinel.submit({ text: "/jobs", context, reply: target, command: parseCommand("/jobs") })
      .notice,
    "No scheduled tasks. Ask me to remind you of something.",
  );
});

Deno.test("JobScheduler pauses a job whose chat refuses its reply with 403, saying why", async () => {
  const clock = { now: T0 };
  const channel: ReplyChannel = {
    split: (_t, text) => [text],
    send: (_t, _text, part) => {
      part.leaving?.();
      return Promise.resolve({
        ok: false,
        status: 403,
        retryable: false,
        message: "the Test API answered 403: bot was blocked by the user",
      });
    },
    inDoubt: () => Promise.resolve("resend_marked"),
  };
  const { sentinel } = sentinelAt(clock, sqliteStorage(), recordingExecutor().execute, channel);
  const job = create(sentinel, { prompt: "ping", schedule: { every: 60 } }, {
    target: { platform: "telegram", chat_id: 7 },
    context: { session_key: "telegram:7", platform: "telegram", chat_id: "7" },
  });
  clock.now += 60_000;
  await sentinel.alarm();
  const view = sentinel.withJobs((jobs) => jobs.view(job.id)!);
  assertEquals(view.status, "paused");
  assertMatch(view.reason ?? "", /could not be reached.*403/);
});

Deno.test("JobScheduler removes a due job whose creator lost access instead of firing it", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const asked: unknown[] = [];
  let allowed = true;
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    now: () => clock.now,
    jobAllowed: (context) => (asked.push(context.user_id), Promise.resolve(allowed)),
  });
  const origin: JobOrigin = {
    target: null,
    context: { session_key: "telegram:7", platform: "telegram", user_id: "42" },
  };
  const job = create(sentinel, { prompt: "tick", schedule: { every: 60 } }, origin);
  clock.now += 60_000;
  await sentinel.alarm();
  allowed = false;
  clock.now += 60_000;
  await sentinel.alarm();
  assertEquals(exec.state.order, ["tick"], "ran while allowed, not after");
  assertEquals(asked, ["42", "42"]);
  assertEquals(sentinel.withJobs((jobs) => jobs.view(job.id)), null);
});

Deno.test("JobScheduler records an occurrence its host skips (creator over quota) as a failed run, tells the chat, and keeps the schedule", async () => {
  const clock = { now: T0 };
  const exec = recordingExecutor();
  const sent: { target: ReplyTarget; text: string }[] = [];
  const channel: ReplyChannel = {
    split: (_t, text) => [text],
    send: (target, text, part) => {
      part.leaving?.();
      sent.push({ target, text });
      return Promise.resolve({ ok: true });
    },
    inDoubt: () => Promise.resolve("resend_marked"),
  };
  const asked: string[] = [];
  let over = true;
  const sentinel = new SessionSentinel(sqliteStorage(), exec.execute, {
    ...options,
    now: () => clock.now,
    channel,
    jobAllowed: (_context, occurrence) => {
      asked.push(occurrence);
      const error = {
        type: "rate_limited",
        message: "its creator is over USER_TURNS_PER_HOUR (2)",
      };
      return Promise.resolve(over ? { error, notice: "skipped: over the limit" } : true);
    },
  });
  const target = { platform: "telegram", chat_id: 7 };
  const job = create(sentinel, { prompt: "tick", schedule: { every: 60 } }, {
    target,
    context: { session_key: "telegram:7", platform: "telegram", chat_id: "7", user_id: "42" },
  });
  clock.now += 60_000;
  await sentinel.alarm();
  await sentinel.alarm(); // a repeated alarm asks nothing more and changes nothing
  await new Promise((resolve) => setTimeout(resolve, 10)); // the notice's send
  assertEquals(exec.state.order, [], "no turn for a skipped occurrence");
  assertEquals(asked, [`job:${job.id}:${T0 + 60_000}`]);
  assertEquals(sent, [{ target, text: "skipped: over the limit" }]);
  const skipped = sentinel.withJobs((jobs) => jobs.view(job.id)!);
  assertEquals([skipped.status, skipped.last_runs.map((r) => r.status)], ["active", ["failed"]]);
  assertEquals(skipped.next_run_at, new Date(T0 + 120_000).toISOString());
  assertMatch(skipped.reason ?? "", /over USER_TURNS_PER_HOUR/);
  assertEquals(sentinel.runState(skipped.last_runs[0].seq), {
    status: "failed",
    error: { type: "rate_limited", message: "its creator is over USER_TURNS_PER_HOUR (2)" },
  });
  over = false;
  clock.now += 60_000;
  await sentinel.alarm();
  assertEquals(exec.state.order, ["tick"], "the next occurrence, under the quota, runs");
});

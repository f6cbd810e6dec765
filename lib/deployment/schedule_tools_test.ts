// Unit tests: which schedule_task calls wait for approval (APPROVE_RECURRING_JOBS), and the chat's job-created notice; Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { readConfig } from "./config.ts";
import { createScheduleTaskTool, SCHEDULE_TOOL_NAMES, scheduleTools } from "./schedule_tools.ts";
import { jobCreatedText } from "../chat/mod.ts";
import { toolAsks } from "../agent/mod.ts";

const none: ReadonlySet<string> = new Set();

Deno.test("createScheduleTaskTool() with approveRecurring asks for every and cron, not for in or at", () => {
  const tool = createScheduleTaskTool({ approveRecurring: true });
  const asks = (args: Record<string, unknown>) => toolAsks(tool, args, none);
  assert(asks({ prompt: "ping", every: 60 }));
  assert(asks({ prompt: "ping", cron: "0 9 * * *", tz: "Europe/Paris" }));
  // Invalid mixes are refused when run, but must not slip past the question first.
  assert(asks({ prompt: "ping", in: 60, every: 60 }));
  assert(!asks({ prompt: "ping", in: 60 }));
  assert(!asks({ prompt: "ping", at: "2030-01-31T09:00:00+01:00" }));
});

Deno.test("createScheduleTaskTool() without approveRecurring never asks by itself; APPROVAL_TOOLS still can", () => {
  const tool = createScheduleTaskTool({ approveRecurring: false });
  assert(!toolAsks(tool, { prompt: "ping", every: 60 }, none));
  assert(!toolAsks(tool, { prompt: "ping", cron: "* * * * *" }, none));
  assert(toolAsks(tool, { prompt: "ping", in: 60 }, new Set(["schedule_task"])));
});

Deno.test("scheduleTools() lists schedule_task, list_scheduled_tasks and cancel_scheduled_task; only schedule_task asks", () => {
  const tools = scheduleTools({ approveRecurring: true });
  assertEquals(tools.map((t) => t.name), [...SCHEDULE_TOOL_NAMES]);
  assertEquals(SCHEDULE_TOOL_NAMES, [
    "schedule_task",
    "list_scheduled_tasks",
    "cancel_scheduled_task",
  ]);
  assertEquals(tools.map((t) => toolAsks(t, { every: 60, id: 1 }, none)), [true, false, false]);
});

Deno.test("readConfig() APPROVE_RECURRING_JOBS: on by default and for anything but off", () => {
  assertEquals(readConfig({}).approveRecurringJobs, true);
  assertEquals(readConfig({ APPROVE_RECURRING_JOBS: "on" }).approveRecurringJobs, true);
  assertEquals(readConfig({ APPROVE_RECURRING_JOBS: "OFF" }).approveRecurringJobs, false);
});

Deno.test("jobCreatedText() names the job, its schedule and prompt, and how to cancel it", () => {
  const every = jobCreatedText({
    id: 3,
    prompt: "ping the server",
    schedule: { every: 60 },
    next_run_at: "2030-01-01T00:01:00.000Z",
  });
  assertEquals(every.split("\n")[0], "Scheduled task #3 (every 60 s): ping the server");
  assertMatch(every, /cancel task #3/);
  const cron = jobCreatedText({
    id: 4,
    prompt: "standup",
    schedule: { cron: "0 9 * * 1-5", tz: "Europe/Paris" },
    next_run_at: null,
  });
  assertMatch(cron, /^Scheduled task #4 \(cron 0 9 \* \* 1-5 Europe\/Paris\): standup\n/);
  const once = jobCreatedText({
    id: 5,
    prompt: "x".repeat(300),
    schedule: { at: "2030-01-01T00:00:00Z" },
    next_run_at: "2030-01-01T00:00:00.000Z",
  });
  assertMatch(once, /^Scheduled task #5 \(once at 2030-01-01T00:00:00\.000Z\): x{200}…\n/);
});

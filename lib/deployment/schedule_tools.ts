// Built-in tools that let the model schedule turns for later (a reminder, a daily summary), list and cancel them; runtime-neutral.
import * as z from "zod";
import { MIN_EVERY_SECONDS, type ScheduleInput, scheduleInput } from "../session/schedule.ts";
import { currentTurnJobs, type TurnJobs } from "../session/turn_jobs.ts";
import { defineTool, type Tool } from "../agent/mod.ts";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _args = z.lazy(() =>
  z.object({
    prompt: z.string(),
    at: z.string().optional(),
    in: z.number().optional(),
    every: z.number().optional(),
    cron: z.string().optional(),
    tz: z.string().optional(),
  })
);

/** The turn's jobs; a tool error the model reads when the turn has none (no session). */
function _jobs(): TurnJobs {
  const jobs = currentTurnJobs();
  if (!jobs) throw new Error("scheduling is not available here");
  return jobs;
}

/** How the scheduling tools behave in a deployment. */
export interface ScheduleToolsOptions {
  /**
   * A recurring job (`every`, `cron`) waits for the user's approval before it is created
   * (`APPROVE_RECURRING_JOBS`, default on): a prompt injected into a tool result must not plant a
   * job that runs for ever unasked. A one-off runs once, so it does not ask.
   */
  approveRecurring: boolean;
}

/** Whether `schedule_task` arguments ask for a recurring job (either field given, whatever else is). */
export function schedulesRecurring(args: Record<string, unknown>): boolean {
  return args.every !== undefined || args.cron !== undefined;
}

/** `schedule_task`: a prompt to run later in this conversation, once or on a schedule. */
export function createScheduleTaskTool(options: ScheduleToolsOptions): Tool {
  return defineTool<Record<string, unknown>>({
    name: "schedule_task",
    description:
      "Schedules a prompt to run later as a new turn in this conversation; the answer is posted " +
      "here. Give exactly one of: at (ISO-8601 time with zone), in (seconds from now), every " +
      `(seconds, at least ${MIN_EVERY_SECONDS}), or cron (5 fields) with tz (IANA zone, default UTC).`,
    parameters: {
      type: "object",
      properties: {
        prompt: { type: "string", description: "What to do or say when it runs." },
        at: { type: "string", description: "Once, at this time, e.g. 2030-01-31T09:00:00+01:00." },
        in: { type: "integer", description: "Once, this many seconds from now." },
        every: { type: "integer", description: `Repeatedly, every this many seconds (≥ 60).` },
        cron: { type: "string", description: "Repeatedly, on this 5-field cron expression." },
        tz: { type: "string", description: "The cron expression's IANA time zone." },
      },
      required: ["prompt"],
      additionalProperties: false,
    },
    async run(raw) {
      const args = _args.safeParse(raw);
      if (!args.success) throw new Error("prompt (a string) and one schedule field are required");
      const { prompt, tz, ...when } = args.data;
      const given = Object.entries(when).filter(([, v]) => v !== undefined);
      if (given.length !== 1) throw new Error("give exactly one of at, in, every or cron");
      const schedule = scheduleInput.safeParse({
        ...Object.fromEntries(given),
        ...(when.cron !== undefined && tz !== undefined ? { tz } : {}),
      });
      if (!schedule.success) throw new Error("the schedule's value has the wrong type or range");
      const result = await _jobs().create({ prompt, schedule: schedule.data as ScheduleInput });
      if ("error" in result) throw new Error(result.error);
      return { scheduled: result.job };
    },
    ...(options.approveRecurring ? { approval: schedulesRecurring } : {}),
  });
}

/** `list_scheduled_tasks`: this conversation's jobs. */
export const listScheduledTasksTool: Tool = defineTool({
  name: "list_scheduled_tasks",
  description: "Lists the tasks scheduled in this conversation, with their next run.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => ({ tasks: _jobs().list() }),
});

/** `cancel_scheduled_task`: removes one job by id. */
export const cancelScheduledTaskTool: Tool = defineTool<{ id: unknown }>({
  name: "cancel_scheduled_task",
  description:
    "Cancels a scheduled task of this conversation by its id (see list_scheduled_tasks).",
  parameters: {
    type: "object",
    properties: { id: { type: "integer" } },
    required: ["id"],
    additionalProperties: false,
  },
  run({ id }) {
    if (typeof id !== "number" || !Number.isInteger(id)) throw new Error("id must be an integer");
    if (!_jobs().cancel(id)) throw new Error(`no scheduled task ${id}`);
    return { cancelled: id };
  },
});

/** The three scheduling tools, in the order the model sees them. */
export function scheduleTools(options: ScheduleToolsOptions): Tool[] {
  return [createScheduleTaskTool(options), listScheduledTasksTool, cancelScheduledTaskTool];
}

/** The scheduling tools' names (a client's tools may not take them). */
export const SCHEDULE_TOOL_NAMES: readonly string[] = scheduleTools({ approveRecurring: true })
  .map((tool) => tool.name);

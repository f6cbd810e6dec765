// A job's schedule: the four shapes (at, in, every, cron with a time zone), checked, and its next occurrence (croner); runtime-neutral.
import { Cron } from "croner";
import * as z from "zod";

/** A schedule as callers give it: once `at` a time or `in` seconds; `every` seconds; a 5-field `cron` in `tz`. */
export type ScheduleInput =
  | { at: string }
  | { in: number }
  | { every: number }
  | { cron: string; tz?: string };

/** A schedule as stored: `in` is resolved to its instant at creation, `every` anchored there. */
export type Schedule =
  | { at: string }
  | { every: number; anchor: number }
  | { cron: string; tz: string };

/** The smallest interval of an `every` schedule, in seconds. */
export const MIN_EVERY_SECONDS = 60;

/**
 * The API's and the tool's schedule shape (one of the four; anything else is refused), built on
 * its first parse (`z.lazy`): a start-up builds none of it.
 */
export const scheduleInput: z.ZodType<ScheduleInput> = z.lazy(() =>
  z.union([
    z.strictObject({ at: z.string().min(1).max(64) }),
    z.strictObject({ in: z.number().int().positive().max(10 * 365 * 86_400) }),
    z.strictObject({ every: z.number().int().positive().max(366 * 86_400) }),
    z.strictObject({ cron: z.string().min(1).max(120), tz: z.string().min(1).max(64).optional() }),
  ])
);

/**
 * Checks `input` at `now` and resolves it to what is stored, with its first occurrence; or the
 * reason it is refused, in words a caller (or the model) can act on.
 */
export function resolveSchedule(
  input: ScheduleInput,
  now: number,
): { schedule: Schedule; first: number } | { error: string } {
  if ("in" in input) {
    return resolveSchedule({ at: new Date(now + input.in * 1000).toISOString() }, now);
  }
  if ("at" in input) {
    const at = Date.parse(input.at);
    if (!_ISO.test(input.at) || Number.isNaN(at)) {
      return { error: `"at" must be an ISO-8601 time with a zone, e.g. 2030-01-31T09:00:00Z` };
    }
    if (at <= now) return { error: `"at" is in the past (${input.at})` };
    return { schedule: { at: new Date(at).toISOString() }, first: at };
  }
  if ("every" in input) {
    if (input.every < MIN_EVERY_SECONDS) {
      return { error: `"every" must be at least ${MIN_EVERY_SECONDS} seconds` };
    }
    const schedule = { every: input.every, anchor: now };
    return { schedule, first: now + input.every * 1000 };
  }
  const fields = input.cron.trim().split(/\s+/);
  if (fields.length !== 5) {
    return { error: `"cron" takes 5 fields (minute hour day-of-month month day-of-week)` };
  }
  const tz = input.tz ?? "UTC";
  const schedule = { cron: fields.join(" "), tz };
  let first: number | null;
  try {
    first = nextOccurrence(schedule, now);
  } catch (error) {
    const why = error instanceof Error ? error.message.split(". ")[0] : "invalid";
    return { error: `"cron" or "tz" is not valid: ${why}` };
  }
  if (first === null) return { error: `"cron" never occurs` };
  return { schedule, first };
}

/** The first occurrence of `schedule` strictly after `after` (ms), or null when there is none. */
export function nextOccurrence(schedule: Schedule, after: number): number | null {
  if ("at" in schedule) {
    const at = Date.parse(schedule.at);
    return at > after ? at : null;
  }
  if ("every" in schedule) {
    const step = schedule.every * 1000;
    const n = Math.floor((after - schedule.anchor) / step) + 1;
    return schedule.anchor + Math.max(1, n) * step;
  }
  const cron = new Cron(schedule.cron, { timezone: schedule.tz, paused: true });
  return cron.nextRun(new Date(after))?.getTime() ?? null;
}

/** The schedule as the API shows it (`every` without its anchor). */
export function scheduleView(schedule: Schedule): ScheduleInput {
  if ("every" in schedule) return { every: schedule.every };
  return schedule;
}

// A date, a time and a zone (Z or ±hh:mm): a time without a zone would mean the Worker's.
const _ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

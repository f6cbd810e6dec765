// Unit tests of job schedules (lib/session/schedule.ts): the four shapes, refusals, next occurrences across DST; Deno.
import { assertEquals } from "@std/assert";
import { nextOccurrence, resolveSchedule, scheduleInput } from "./schedule.ts";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

Deno.test("resolveSchedule() turns `in` into an instant and anchors `every` at creation", () => {
  const once = resolveSchedule({ in: 90 }, NOW);
  assertEquals("first" in once && iso(once.first), "2026-03-01T12:01:30.000Z");
  assertEquals("schedule" in once && once.schedule, { at: "2026-03-01T12:01:30.000Z" });
  const every = resolveSchedule({ every: 3600 }, NOW);
  assertEquals("first" in every && iso(every.first), "2026-03-01T13:00:00.000Z");
});

Deno.test("resolveSchedule() refuses a past `at`, a zoneless `at`, an interval under a minute, a malformed cron, an unknown zone", () => {
  const refused = [
    resolveSchedule({ at: "2026-02-28T12:00:00Z" }, NOW),
    resolveSchedule({ at: "2026-03-02T12:00:00" }, NOW),
    resolveSchedule({ at: "tomorrow" }, NOW),
    resolveSchedule({ every: 59 }, NOW),
    resolveSchedule({ cron: "61 * * * *" }, NOW),
    resolveSchedule({ cron: "0 9 * * * *" }, NOW),
    resolveSchedule({ cron: "0 9 * * *", tz: "Mars/Olympus_Mons" }, NOW),
  ];
  for (const result of refused) assertEquals("error" in result, true, JSON.stringify(result));
});

Deno.test("scheduleInput refuses two shapes at once and unknown fields", () => {
  assertEquals(scheduleInput.safeParse({ at: "2030-01-01T00:00:00Z", every: 60 }).success, false);
  assertEquals(scheduleInput.safeParse({ every: 60, extra: 1 }).success, false);
  assertEquals(scheduleInput.safeParse({ cron: "0 9 * * *", tz: "Europe/Berlin" }).success, true);
});

Deno.test("nextOccurrence() of a zoned cron lands at 09:00 local on both sides of a DST change", () => {
  const daily = { cron: "0 9 * * *", tz: "America/New_York" };
  // US clocks go forward on 2026-03-08: 09:00 is 14:00Z before (EST), 13:00Z after (EDT).
  assertEquals(
    iso(nextOccurrence(daily, Date.parse("2026-03-07T00:00:00Z"))),
    "2026-03-07T14:00:00.000Z",
  );
  assertEquals(
    iso(nextOccurrence(daily, Date.parse("2026-03-07T14:00:00Z"))),
    "2026-03-08T13:00:00.000Z",
  );
  // And back on 2026-11-01: 13:00Z on the Saturday, 14:00Z from the Sunday.
  assertEquals(
    iso(nextOccurrence(daily, Date.parse("2026-10-31T12:00:00Z"))),
    "2026-10-31T13:00:00.000Z",
  );
  assertEquals(
    iso(nextOccurrence(daily, Date.parse("2026-10-31T13:00:00Z"))),
    "2026-11-01T14:00:00.000Z",
  );
});

Deno.test("nextOccurrence() of `every` skips to the first slot after a long gap; of `at`, none once past", () => {
  const every = { every: 60, anchor: NOW };
  assertEquals(iso(nextOccurrence(every, NOW)), "2026-03-01T12:01:00.000Z");
  assertEquals(iso(nextOccurrence(every, NOW + 10 * 60_000 + 5)), "2026-03-01T12:11:00.000Z");
  assertEquals(nextOccurrence({ at: "2026-03-01T12:00:00.000Z" }, NOW), null);
});

// Unit tests of whose access record and quota a scheduled job's occurrence answers to (lib/access/job_creator.ts); Deno.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { accessConfig, type AccessMode } from "./access_policy.ts";
import { jobCreator, jobCreatorCheck, jobOccurrenceVerdict } from "./job_creator.ts";
import type { RecordStorage } from "./record_storage.ts";
import { admitToRecord } from "./sender_record.ts";

/** The limits of access settings written as env texts (only those these tests set). */
const limits = (env: Record<string, string>, apiTurnsPerMinute: number | null = null) => ({
  access: accessConfig({
    mode: (env.ACCESS_POLICY ?? "pairing") as AccessMode,
    allowed: env.ALLOWED_USERS?.split(",") ?? [],
    admins: env.ADMIN_USERS?.split(",") ?? [],
    githubAssociations: ["OWNER", "MEMBER", "COLLABORATOR"],
    githubRefusal: "silence",
    userTurnsPerHour: env.USER_TURNS_PER_HOUR ? Number(env.USER_TURNS_PER_HOUR) : null,
    maxPendingPairings: 50,
  }),
  apiTurnsPerMinute,
});

/** An access record in memory, as its object's `storage.kv` keeps it. */
function record(): RecordStorage {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    put: (key: string, value: unknown) => void map.set(key, value),
    delete: (key: string) => map.delete(key),
  };
}

Deno.test("jobCreatorCheck() counts an API session's job against its tenant's API_TURNS_PER_MINUTE, keyed by the occurrence", () => {
  const check = jobCreatorCheck(
    limits({}, 3),
    { platform: "api", session_key: "api.acme:s" },
    "job:1:1000",
  );
  assertEquals(check?.record, { tenant: "acme" });
  assertEquals(check?.request.quota, { limit: 3, windowMs: 60_000 });
  assertEquals(check?.request.deliveryKey, "api.acme:s:job:1:1000");
  // A job the API made in an API session binds only its session key: the default tenant's.
  assertEquals(jobCreatorCheck(limits({}, 3), { session_key: "api:s" }, "o")?.record, {
    tenant: "default",
  });
  assertStrictEquals(jobCreatorCheck(limits({}), { session_key: "api:s" }, "o"), null);
});

Deno.test("jobCreatorCheck() counts a chat user's job against USER_TURNS_PER_HOUR in their own record; admins and no quota cost nothing", () => {
  const telegram = { platform: "telegram", user_id: "42", session_key: "telegram:42" };
  const quota = limits({
    ACCESS_POLICY: "open",
    USER_TURNS_PER_HOUR: "2",
    ADMIN_USERS: "telegram:1",
  });
  const check = jobCreatorCheck(quota, telegram, "job:3:5");
  assertEquals(check?.record, {
    sender: { platform: "telegram", user: "42", name: "", direct: false },
  });
  assertEquals([check?.request.needsPairing, check?.request.quota], [false, {
    limit: 2,
    windowMs: 3_600_000,
  }]);
  assertStrictEquals(jobCreatorCheck(quota, { ...telegram, user_id: "1" }, "o"), null, "admin");
  assertStrictEquals(jobCreatorCheck(limits({ ACCESS_POLICY: "open" }), telegram, "o"), null);
  // Unlisted under pairing: asked whether still paired, even without a quota.
  const paired = jobCreatorCheck(limits({ ACCESS_POLICY: "pairing" }), telegram, "o");
  assertEquals([paired?.request.needsPairing, paired?.request.quota], [true, null]);
  // The generic webhook answers to its signature.
  assertStrictEquals(
    jobCreatorCheck(quota, { platform: "webhook", user_id: "ops", session_key: "webhook:x" }, "o"),
    null,
  );
});

Deno.test("jobCreator() names Slack and GitHub creators as the access check does (T…/U…, the login)", () => {
  assertEquals(
    jobCreator({
      platform: "slack",
      user_id: "U9",
      user_name: "U9",
      session_key: "slack:T1:C2:17.5",
    })
      ?.user,
    "T1/U9",
  );
  assertEquals(
    jobCreator({
      platform: "github",
      user_id: "583231",
      user_name: "Octocat",
      session_key: "github:o/r#1",
    })
      ?.user,
    "Octocat",
  );
  assertEquals(jobCreator({ platform: "line", user_id: "Uabc" })?.user, "Uabc");
  assertStrictEquals(jobCreator({ platform: "generic", user_id: "ops" }), null);
});

Deno.test("jobOccurrenceVerdict() runs under the quota, skips past it with one notice per period, removes an unpaired creator's job", () => {
  const check = jobCreatorCheck(
    limits({ ACCESS_POLICY: "open", USER_TURNS_PER_HOUR: "2" }),
    { platform: "telegram", user_id: "42", session_key: "telegram:42" },
    "job:1:0",
  )!;
  const storage = record();
  const admit = (occurrence: string, now: number) =>
    jobOccurrenceVerdict(
      check,
      admitToRecord(storage, { ...check.request, deliveryKey: occurrence, now }),
    );
  assertStrictEquals(admit("a", 0), true);
  assertStrictEquals(admit("a", 1), true, "the same occurrence asked again counts once");
  assertStrictEquals(admit("b", 2), true);
  const skipped = admit("c", 3);
  if (typeof skipped === "boolean") throw new Error("not skipped");
  assertEquals(skipped.error.type, "rate_limited");
  assertMatch(skipped.error.message, /over USER_TURNS_PER_HOUR \(2\)/);
  assertMatch(skipped.notice ?? "", /scheduled task was skipped.*2 turns per hour/);
  const again = admit("d", 4);
  assertEquals(typeof again === "object" && again.notice, null, "one notice per period");
  const unpaired = jobCreatorCheck(
    limits({ ACCESS_POLICY: "pairing" }),
    { platform: "telegram", user_id: "7", session_key: "telegram:7" },
    "o",
  )!;
  const refused = admitToRecord(record(), { ...unpaired.request, now: 0 });
  assertStrictEquals(jobOccurrenceVerdict(unpaired, refused), false);
});

// Whose access and quota a scheduled job's occurrence answers to (its API tenant, or the chat user who made it), and what a skipped occurrence says; runtime-neutral.
import { tenantOfSessionKey } from "../api/mod.ts";
import type { JobSkip } from "../session/job_scheduler.ts";
import type { Sender } from "../chat/mod.ts";
import { type AccessConfig, accessVerdict } from "./access_policy.ts";
import type { AdmitRequest, AdmitResult } from "./sender_record.ts";

const _MINUTE_MS = 60_000;
const _HOUR_MS = 60 * 60_000;

/** The settings a job's occurrence is held to: the chat access settings and `API_TURNS_PER_MINUTE`. */
export interface JobLimits {
  access: AccessConfig;
  apiTurnsPerMinute: number | null;
}

/** The context a job was created in (`Job.context`): whose turn or request made it. */
export interface JobCreatorContext {
  platform?: string;
  user_id?: string;
  user_name?: string;
  session_key?: string;
}

/**
 * What to ask before a due occurrence runs: which access record (an API tenant's, or a chat
 * sender's, the very records a chat call or a chat message is counted in) and the request for
 * it. Null: nothing to ask, it runs (no quota applies and no pairing is needed).
 */
export interface JobCreatorCheck {
  record: { tenant: string } | { sender: Sender };
  request: Omit<AdmitRequest, "now">;
  /** The setting whose limit the request counts against, for a skipped occurrence's texts. */
  limit: { setting: "API_TURNS_PER_MINUTE" | "USER_TURNS_PER_HOUR"; value: number } | null;
}

/**
 * The check for occurrence `occurrence` (its job and time, unique in the session) of a job
 * created in `context`. The count's key names the session and occurrence, so an alarm that asks
 * again for the same occurrence (a retry, a restart) is counted once.
 */
export function jobCreatorCheck(
  limits: JobLimits,
  context: JobCreatorContext,
  occurrence: string,
): JobCreatorCheck | null {
  const platform = context.platform ?? "";
  const sessionKey = context.session_key ?? "";
  const deliveryKey = `${sessionKey}:${occurrence}`;
  const tenant = tenantOfSessionKey(sessionKey);
  if (platform === "api" || (!platform && tenant !== null)) {
    // An API session's job: its tenant's quota, as for a chat call (no pairing: the key decided).
    const limit = limits.apiTurnsPerMinute;
    if (limit === null || tenant === null) return null;
    return {
      record: { tenant },
      request: {
        needsPairing: false,
        refusal: "silence",
        name: "",
        quota: { limit, windowMs: _MINUTE_MS },
        deliveryKey,
      },
      limit: { setting: "API_TURNS_PER_MINUTE", value: limit },
    };
  }
  const sender = jobCreator(context);
  if (!sender) return null;
  const verdict = accessVerdict(limits.access, sender);
  // GitHub never pairs: its authors answer to their association, which a job cannot re-ask.
  const needsPairing = verdict.kind === "unlisted" && sender.platform !== "github";
  const admin = verdict.kind === "allowed" && verdict.admin;
  const perHour = admin ? null : limits.access.userTurnsPerHour;
  if (!needsPairing && perHour === null) return null;
  return {
    record: { sender },
    request: {
      needsPairing,
      refusal: "silence",
      name: sender.name,
      quota: perHour === null ? null : { limit: perHour, windowMs: _HOUR_MS },
      deliveryKey,
    },
    limit: perHour === null ? null : { setting: "USER_TURNS_PER_HOUR", value: perHour },
  };
}

/**
 * The chat sender who created a job, named as the access check names them (`platform:user` of
 * `ALLOWED_USERS`), or null for jobs that answer to a signature (the generic webhook). Slack names
 * a sender `T…/U…` and its session keys carry the team; GitHub names them by login.
 */
export function jobCreator(context: JobCreatorContext): Sender | null {
  const platform = context.platform ?? "";
  const id = context.user_id ?? "";
  if (!platform || !id || platform === "webhook" || platform === "generic") return null;
  const name = context.user_name ?? "";
  let user = id;
  if (platform === "github") user = name;
  if (platform === "slack") {
    const team = /^slack:([^:]+):/.exec(context.session_key ?? "")?.[1];
    if (!team) return null;
    user = `${team}/${id}`;
  }
  return user ? { platform, user, name, direct: false } : null;
}

/**
 * What the record's answer means for the occurrence: true runs it, false removes the job (its
 * creator may no longer use the bot), a skip records the occurrence as a failed `rate_limited`
 * run instead of running it, with the notice its chat gets (once per the record's notice period).
 */
export function jobOccurrenceVerdict(
  check: JobCreatorCheck,
  result: AdmitResult,
): boolean | JobSkip {
  if (result.kind === "admitted") return true;
  if (result.kind === "refused") return false;
  // Jobs do not reserve tokens yet (no `tokens` in the check): a budget verdict cannot come.
  if (result.kind === "over_budget") return true;
  const limit = check.limit;
  if (!limit) return true; // over a quota it was not asked to count: cannot happen
  const who = "tenant" in check.record ? "its tenant" : "its creator";
  return {
    error: {
      type: "rate_limited",
      message: `${who} is over ${limit.setting} (${limit.value}); this occurrence was skipped, ` +
        "not run",
    },
    notice: result.notify ? jobSkippedText(limit, result.retryAfterMs) : null,
  };
}

/** To a chat whose scheduled task was skipped because its creator is over their quota. */
export function jobSkippedText(
  limit: { setting: "API_TURNS_PER_MINUTE" | "USER_TURNS_PER_HOUR"; value: number },
  retryAfterMs: number,
): string {
  const perMinute = limit.setting === "API_TURNS_PER_MINUTE";
  const unit = perMinute ? "minute" : "hour";
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `A scheduled task was skipped, not run: the limit of ${limit.value} turn` +
    `${limit.value === 1 ? "" : "s"} per ${unit} is reached. Its next time runs as usual once ` +
    `under the limit (in about ${minutes} minute${minutes === 1 ? "" : "s"}).`;
}

// Whose access and quota a scheduled job's occurrence answers to (its API tenant, or the chat user who made it), and what a skipped occurrence says; runtime-neutral.
import { tenantOfSessionKey } from "../api/mod.ts";
import type { JobSkip } from "../session/job_scheduler.ts";
import type { Sender } from "../chat/mod.ts";
import { type AccessConfig, accessVerdict, senderEntry } from "./access_policy.ts";
import type { AdmitRequest, AdmitResult } from "./sender_record.ts";

const _MINUTE_MS = 60_000;
const _HOUR_MS = 60 * 60_000;

/**
 * The settings a job's occurrence is held to: the chat access settings, `API_TURNS_PER_MINUTE`,
 * and the daily token caps (`spend`; absent: none).
 */
export interface JobLimits {
  access: AccessConfig;
  apiTurnsPerMinute: number | null;
  spend?: {
    userTokensPerDay: number | null;
    tenantTokensPerDay: number | null;
    turnReserve: number;
  };
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
  /** The daily token cap the occurrence reserves from, for a skipped occurrence's texts. */
  tokens?: { setting: "USER_TOKENS_PER_DAY" | "TENANT_TOKENS_PER_DAY"; value: number };
}

/**
 * The access record a job's turns settle their tokens with (`InboundMessage.spend`): its API
 * tenant's, or its chat creator's — the record `jobCreatorCheck` reserved from, under the same
 * key — so a job's turns count against their creator's day. Null: a job of no one's (the
 * generic webhook's).
 */
export function jobSpend(
  context: JobCreatorContext,
  occurrence: string,
): { record: string; key: string } | null {
  const sessionKey = context.session_key ?? "";
  const key = `${sessionKey}:${occurrence}`;
  const tenant = tenantOfSessionKey(sessionKey);
  if (context.platform === "api" || (!context.platform && tenant !== null)) {
    return tenant === null ? null : { record: `tenant:${tenant}`, key };
  }
  const sender = jobCreator(context);
  return sender ? { record: `sender:${senderEntry(sender)}`, key } : null;
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
    const tokenCap = limits.spend?.tenantTokensPerDay ?? null;
    if ((limit === null && tokenCap === null) || tenant === null) return null;
    return {
      record: { tenant },
      request: {
        needsPairing: false,
        refusal: "silence",
        name: "",
        quota: limit === null ? null : { limit, windowMs: _MINUTE_MS },
        deliveryKey,
        tokens: _tokens(limits, tokenCap),
      },
      limit: limit === null ? null : { setting: "API_TURNS_PER_MINUTE", value: limit },
      ...(tokenCap === null
        ? {}
        : { tokens: { setting: "TENANT_TOKENS_PER_DAY", value: tokenCap } }),
    };
  }
  const sender = jobCreator(context);
  if (!sender) return null;
  const verdict = accessVerdict(limits.access, sender);
  // GitHub never pairs: its authors answer to their association, which a job cannot re-ask.
  const needsPairing = verdict.kind === "unlisted" && sender.platform !== "github";
  const admin = verdict.kind === "allowed" && verdict.admin;
  const perHour = admin ? null : limits.access.userTurnsPerHour;
  // USER_TOKENS_PER_DAY holds admins too (a money cap), as for their messages.
  const tokenCap = limits.spend?.userTokensPerDay ?? null;
  if (!needsPairing && perHour === null && tokenCap === null) return null;
  return {
    record: { sender },
    request: {
      needsPairing,
      refusal: "silence",
      name: sender.name,
      quota: perHour === null ? null : { limit: perHour, windowMs: _HOUR_MS },
      deliveryKey,
      tokens: _tokens(limits, tokenCap),
    },
    limit: perHour === null ? null : { setting: "USER_TURNS_PER_HOUR", value: perHour },
    ...(tokenCap === null ? {} : { tokens: { setting: "USER_TOKENS_PER_DAY", value: tokenCap } }),
  };
}

// The occurrence's reservation from a daily token cap, as a message's.
function _tokens(limits: JobLimits, cap: number | null): AdmitRequest["tokens"] {
  return cap === null ? null : { limit: cap, estimate: limits.spend!.turnReserve };
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
  if (result.kind === "over_budget") {
    const cap = check.tokens;
    if (!cap) return true; // over a budget it was not asked to reserve from: cannot happen
    const who = "tenant" in check.record ? "its tenant" : "its creator";
    return {
      error: {
        type: "budget_exceeded",
        message: `${who} is over ${cap.setting} (${cap.value}) for today; this occurrence was ` +
          "skipped, not run",
      },
      notice: result.notify ? jobOverBudgetText(cap.value, result.resetAt, Date.now()) : null,
    };
  }
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

/** To a chat whose scheduled task was skipped because its creator is over their daily tokens. */
export function jobOverBudgetText(limit: number, resetAt: number, now: number): string {
  const hours = Math.max(1, Math.ceil((resetAt - now) / 3_600_000));
  return `A scheduled task was skipped, not run: today's limit of ` +
    `${limit.toLocaleString("en-US")} tokens is reached. It resets at midnight UTC (in about ` +
    `${hours} hour${hours === 1 ? "" : "s"}).`;
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

// The settings table's part on who may use baton and what it logs: logs, access control, API keys and tenants; runtime-neutral.
import type { Setting } from "./setting_types.ts";

/** Logs, access control, API keys and tenants: part of {@link SETTINGS} (settings.ts). */
export const ACCESS_SETTINGS = {
  // Logs.
  LOG_LEVEL: {
    kind: "enum",
    group: "logging",
    values: ["debug", "info", "warn", "error"],
    default: "info",
    description:
      "lowest level of the Worker's JSON log lines (see [Logs](../guides/observability.md#logs))",
  },
  // Access control.
  ACCESS_POLICY: {
    kind: "enum",
    group: "access",
    values: ["pairing", "allowlist", "open"],
    default: "pairing",
    description: "`pairing`: unknown senders get a pairing code in a direct chat; `allowlist`: " +
      "like pairing without codes; `open`: anyone (the pre-access behaviour)",
  },
  ALLOWED_USERS: {
    kind: "list",
    group: "access",
    description: "`platform:user` entries, always allowed: `telegram:123456`, " +
      "`slack:T0123/U0456`, `discord:80351110224678912`, `github:octocat` (any case), " +
      "`whatsapp:16505551234` (the wa_id), `line:U4af49806…` (the userId), " +
      "`twilio:+15551234567` or `twilio:whatsapp:+15551234567` (the `From`), `generic:ops`, or " +
      "`platform:*`",
  },
  ADMIN_USERS: {
    kind: "list",
    group: "access",
    description: "same format; allowed, not counted by quotas, and may approve codes from chat " +
      "with `/pair CODE`",
  },
  GITHUB_ALLOWED_ASSOCIATIONS: {
    kind: "list",
    group: "access",
    default: ["OWNER", "MEMBER", "COLLABORATOR"],
    description:
      "comment authors with these `author_association` values are allowed without a list entry",
  },
  GITHUB_REFUSAL: {
    kind: "enum",
    group: "access",
    values: ["silence", "comment"],
    default: "silence",
    description: "`comment`: an unknown author's mention gets one short refusal comment per issue",
  },
  USER_TURNS_PER_HOUR: {
    kind: "int",
    group: "access",
    min: 1,
    max: 1_000_000,
    default: null,
    description: "turns per platform user per sliding hour, across all their sessions, their " +
      "scheduled jobs' turns included; one more gets one notice per hour and is not queued (a " +
      "job's occurrence is skipped); commands do not count",
  },
  MAX_PENDING_PAIRINGS: {
    kind: "int",
    group: "access",
    min: 1,
    max: 10_000,
    default: 50,
    description: "pairing codes waiting for the owner, at most, per platform; a stranger beyond " +
      "them gets no code (and no reply) until some are approved or expire, and asks again at " +
      "most once an hour",
  },
  // API keys and tenants.
  GATEWAY_API_KEY: {
    kind: "string",
    group: "api",
    secret: true,
    shown: "unset → API refused (403)",
    description: "bearer key for `/v1/*` (tenant `default`)",
  },
  GATEWAY_API_KEYS: {
    kind: "list",
    group: "api",
    secret: true,
    description: "more API keys as `name:key` pairs (name: 1–32 of `A-Z a-z 0-9 _ -`), beside " +
      "`GATEWAY_API_KEY` (tenant `default`)",
  },
  ADMIN_API_KEYS: {
    kind: "list",
    group: "api",
    default: ["default"],
    description: "tenant names that may use `/v1/access/*` and address platform sessions with " +
      "`/v1/sessions/{key}`",
  },
  API_TURNS_PER_MINUTE: {
    kind: "int",
    group: "api",
    min: 1,
    max: 1_000_000,
    default: null,
    description: "turns (chat completions, responses, runs, `POST /v1/jobs/{id}/run`, its API " +
      "sessions' job occurrences) per tenant per sliding minute; one more is 429 `rate_limited` " +
      "with `Retry-After` (a job occurrence is skipped); a retry with the same `Idempotency-Key` " +
      "counts once",
  },
  MAX_SESSIONS_PER_TENANT: {
    kind: "int",
    group: "api",
    min: 1,
    max: 1_000_000,
    default: null,
    description: "sessions an API tenant may hold at once; a request that would start another " +
      "is 403 `session_limit` (its existing sessions go on) until one is erased with " +
      "`DELETE /v1/sessions/{key}`; counted in the tenant's access object by a session's first " +
      "message only (sessions made while it was unset are not counted). Unset by default " +
      "because a client without `X-Session-Id` starts a session per conversation: set it for " +
      "tenants you do not fully trust, with room for their traffic",
  },
  MAX_JOBS_PER_TENANT: {
    kind: "int",
    group: "api",
    min: 1,
    max: 1_000_000,
    default: 200,
    off: true,
    description: "scheduled jobs (not done yet) an API tenant may hold across all its sessions; " +
      "one more is 429 `job_limit` over the API and a tool error for `schedule_task`; a deleted " +
      "job, a one-off that ran or an erased session frees its slot; asked of the tenant's " +
      "access object only when a job is created or ends",
  },
  MAX_STREAMS_PER_TENANT: {
    kind: "int",
    group: "api",
    min: 1,
    max: 1_000_000,
    default: null,
    description: "streamed requests (chat completions, responses, `/v1/runs/{id}/events`) a " +
      "tenant may have open at once; one more is 429 `stream_limit` with `Retry-After` before " +
      "any turn starts; a slot is freed when its stream ends or its client leaves, and within " +
      "2 minutes if its Worker dies",
  },
  CORS_ORIGINS: {
    kind: "list",
    group: "api",
    shown: "none (no CORS headers)",
    description: "origins allowed to call the API from a browser; a preflight from any other " +
      "origin is 403",
  },
} as const satisfies Record<string, Setting>;

// Deployment settings read from the Worker's env (vars and secrets); runtime-neutral.
import { type AccessConfig, readAccessConfig } from "../access/access_policy.ts";
import {
  type ContextDefaults,
  contextDefaultsFromEnv,
  LOG_LEVELS,
  type LogLevel,
} from "../runtime/mod.ts";
import { parseTenantKeys, type TenantKey } from "../api/mod.ts";
import { type McpConfig, parseMcpServers } from "../mcp/mcp_servers.ts";
import type { BusyMode } from "../session/mod.ts";
import { GROUP_STOP_MODES, type GroupStop } from "../session/group_stop.ts";

/** Everything baton reads from its environment. */
export interface BatonConfig {
  /** Unset: the built-in echo model. */
  llmBaseUrl: string;
  llmApiKey: string;
  llmModel: string;
  llmMaxRetries: number;
  llmTimeoutMs: number;
  systemPrompt: string;
  maxTurnSteps: number;
  historyWindow: number;
  turnTimeoutMs: number;
  /** How long a claim may go unwatched before the alarm checks its executor is alive. */
  turnLeaseMs: number;
  /** What a message arriving during a turn does: queue (default), interrupt or merge. */
  busyMode: BusyMode;
  maxQueued: number;
  /** The "Queued —" notice to chat users; BUSY_ACK=off disables it. */
  busyAck: boolean;
  /**
   * Who may /stop, /new or /reset a turn in a group chat (`GROUP_STOP`): `sender` (the default:
   * the turn's sender or an admin, `ADMIN_USERS`) or `anyone` (every member).
   */
  groupStop: GroupStop;
  /** API keys and their tenants: `GATEWAY_API_KEY` (tenant `default`) and `GATEWAY_API_KEYS`; none: the API is off. */
  apiKeys: readonly TenantKey[];
  /** Tenants that may use `/v1/access/*` and address platform sessions (`ADMIN_API_KEYS`, default `default`). */
  adminTenants: readonly string[];
  /** Turns each API tenant may start per minute (`API_TURNS_PER_MINUTE`); null: unlimited. */
  apiTurnsPerMinute: number | null;
  /** Browser origins allowed to call the API (`CORS_ORIGINS`); none: no CORS headers. */
  corsOrigins: readonly string[];
  /** Who may talk to the bot on the chat platforms. */
  access: AccessConfig;
  /** Tools whose every call waits for the user's approval (`APPROVAL_TOOLS`, built-ins too); default none. */
  approvalTools: ReadonlySet<string>;
  /**
   * A recurring job the model schedules (`schedule_task` with `every` or `cron`) waits for the
   * user's approval like an `APPROVAL_TOOLS` call (`APPROVE_RECURRING_JOBS`, default on; `off`).
   */
  approveRecurringJobs: boolean;
  /**
   * How long a pending approval waits before it counts as denied: `chat` for chat users, `api` for
   * API callers. `APPROVAL_TIMEOUT_MS` sets both; unset, 24 h and 10 min.
   */
  approvalTimeoutMs: { chat: number; api: number };
  /** How often a held-open API response sends a keep-alive (`KEEPALIVE_MS`); default 15 s. */
  keepAliveMs: number;
  /** Scheduled jobs not done yet, at most, per session (`MAX_JOBS_PER_SESSION`); default 20. */
  maxJobsPerSession: number;
  /** Chat replies previewed as they grow where the platform can (`STREAM_REPLIES`, default on). */
  streamReplies: boolean;
  /**
   * Sessions an API tenant may hold (`MAX_SESSIONS_PER_TENANT`, default unlimited): a request
   * that would start another is refused. Counted in the tenant's access object, asked only by a
   * session's first message, never by the ones after. Off by default: a client without
   * `X-Session-Id` starts a session per conversation, and a cap would end its service one day.
   */
  maxSessionsPerTenant: number | null;
  /**
   * Scheduled jobs not done yet an API tenant may hold across its sessions
   * (`MAX_JOBS_PER_TENANT`, default 200; `off`): one more is refused. Asked of the tenant's
   * access object only when a job is created (and told when one ends), never on a turn's path.
   */
  maxJobsPerTenant: number | null;
  /**
   * Event streams an API tenant may have open at once (`MAX_STREAMS_PER_TENANT`; default off:
   * when set, every streamed request asks the tenant's access object for a slot).
   */
  maxStreamsPerTenant: number | null;
  contextDefaults: ContextDefaults;
  /** Remote MCP servers whose tools the agent may call (`MCP_SERVERS`, `MCP_TIMEOUT_MS`, `MCP_TOOLS_TTL_MS`). */
  mcp: McpConfig;
  /** The lowest level logged (`LOG_LEVEL`: debug, info, warn or error); default info. */
  logLevel: LogLevel;
}

/** Reads the config from the Worker's env (vars and secrets); a malformed number falls back to its default. */
export function readConfig(vars: object): BatonConfig {
  const env = vars as Record<string, unknown>;
  const llmBaseUrl = _string(env.LLM_BASE_URL);
  return {
    llmBaseUrl,
    llmApiKey: _string(env.LLM_API_KEY),
    llmModel: _string(env.LLM_MODEL) || (llmBaseUrl ? "gpt-4o-mini" : "echo"),
    llmMaxRetries: _int(env.LLM_MAX_RETRIES, 3, 0, 10),
    llmTimeoutMs: _int(env.LLM_TIMEOUT_MS, 120_000, 1_000, 600_000),
    systemPrompt: _string(env.SYSTEM_PROMPT),
    maxTurnSteps: _int(env.MAX_TURN_STEPS, 8, 1, 64),
    historyWindow: _int(env.HISTORY_WINDOW, 40, 2, 1_000),
    turnTimeoutMs: _int(env.TURN_TIMEOUT_MS, 600_000, 1_000, 840_000),
    turnLeaseMs: _int(env.TURN_LEASE_MS, 30_000, 100, 600_000),
    busyMode: (["queue", "interrupt", "merge"] as const).find((m) => m === env.BUSY_INPUT_MODE) ??
      "queue",
    maxQueued: _int(env.MAX_QUEUED, 32, 1, 1_000),
    busyAck: _string(env.BUSY_ACK).toLowerCase() !== "off",
    groupStop: GROUP_STOP_MODES.find((m) => m === _string(env.GROUP_STOP).toLowerCase()) ??
      "sender",
    apiKeys: parseTenantKeys(_string(env.GATEWAY_API_KEY), _string(env.GATEWAY_API_KEYS)),
    adminTenants: _list(env.ADMIN_API_KEYS, ["default"]),
    apiTurnsPerMinute: _limit(env.API_TURNS_PER_MINUTE),
    corsOrigins: _list(env.CORS_ORIGINS, []).map((o) => o.replace(/\/+$/, "")),
    access: readAccessConfig(env),
    approvalTools: new Set(_list(env.APPROVAL_TOOLS, [])),
    approveRecurringJobs: _string(env.APPROVE_RECURRING_JOBS).toLowerCase() !== "off",
    approvalTimeoutMs: {
      chat: _int(env.APPROVAL_TIMEOUT_MS, _DAY_MS, 100, 7 * _DAY_MS),
      api: _int(env.APPROVAL_TIMEOUT_MS, 10 * 60_000, 100, 7 * _DAY_MS),
    },
    keepAliveMs: _int(env.KEEPALIVE_MS, 15_000, 100, 60_000),
    maxJobsPerSession: _int(env.MAX_JOBS_PER_SESSION, 20, 1, 1_000),
    streamReplies: _string(env.STREAM_REPLIES).toLowerCase() !== "off",
    maxSessionsPerTenant: _limit(env.MAX_SESSIONS_PER_TENANT),
    maxJobsPerTenant: _cap(env.MAX_JOBS_PER_TENANT, 200),
    maxStreamsPerTenant: _limit(env.MAX_STREAMS_PER_TENANT),
    contextDefaults: contextDefaultsFromEnv(env),
    mcp: {
      ...parseMcpServers(env.MCP_SERVERS, env),
      timeoutMs: _int(env.MCP_TIMEOUT_MS, 30_000, 100, 600_000),
      toolsTtlMs: _int(env.MCP_TOOLS_TTL_MS, 300_000, 100, _DAY_MS),
    },
    logLevel: LOG_LEVELS.find((l) => l === _string(env.LOG_LEVEL).toLowerCase()) ?? "info",
  };
}

const _DAY_MS = 24 * 60 * 60 * 1000;

function _string(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A comma-separated list, trimmed, empty entries dropped; `fallback` when unset. */
function _list(value: unknown, fallback: string[]): string[] {
  if (typeof value !== "string" || !value.trim()) return fallback;
  return value.split(",").map((v) => v.trim()).filter(Boolean);
}

/** A positive whole-number limit (≤ 1,000,000), or null for unset or invalid: unlimited. */
function _limit(value: unknown): number | null {
  const n = _int(value, 0, 1, 1_000_000);
  return n === 0 ? null : n;
}

/** A cap: `off` (or 0) for none, a whole number 1-1,000,000, else `fallback`. */
function _cap(value: unknown, fallback: number): number | null {
  const text = _string(value).trim().toLowerCase();
  if (text === "off" || text === "0") return null;
  return _int(text, fallback, 1, 1_000_000);
}

function _int(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === "number"
    ? value
    : typeof value === "string" && value
    ? Number(value)
    : NaN;
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

// Deployment settings read from the Worker's env (vars and secrets); runtime-neutral.
import { type AccessConfig, accessConfig } from "../access/access_policy.ts";
import { type ContextDefaults, contextDefaultsFromEnv, type LogLevel } from "../runtime/mod.ts";
import {
  countSetting,
  enumSetting,
  intSetting,
  listSetting,
  switchSetting,
  textSetting,
} from "./setting_values.ts";
import { SETTINGS } from "./settings.ts";
import { parseTenantKeys, type TenantKey } from "../api/mod.ts";
import { type McpConfig, parseMcpServers } from "../mcp/mcp_servers.ts";
import { type ModelPrices, parseModelPrices } from "../agent/model_prices.ts";
import type { BusyMode } from "../session/mod.ts";
import type { GroupStop } from "../session/group_stop.ts";
import { type FallbackModel, parseModelFallbacks } from "./model_config.ts";
import { isAiRunner, type MediaSettings, type PdfjsLoader } from "../media/mod.ts";

/** Everything baton reads from its environment. */
export interface BatonConfig {
  /** Unset: the built-in echo model. */
  llmBaseUrl: string;
  llmApiKey: string;
  llmModel: string;
  llmMaxRetries: number;
  llmTimeoutMs: number;
  /** The models a user (`/model`) or API caller (`model`) may choose (`MODELS`); empty: choice is off. */
  models: readonly string[];
  /** Asked in order when the model before fails with 429, 5xx or a timeout (`MODEL_FALLBACKS`). */
  modelFallbacks: readonly FallbackModel[];
  systemPrompt: string;
  maxTurnSteps: number;
  historyWindow: number;
  /** `CONTEXT_TOKENS`: past it a conversation's oldest turns are summarised; null: off. */
  contextTokens: number | null;
  /** `TOOL_RESULT_MAX_CHARS`: a longer tool result is cut with a note. */
  toolResultMaxChars: number;
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
  /** How long a deployment's hook may run before the turn goes on without it (`HOOK_TIMEOUT_MS`); default 5 s. */
  hookTimeoutMs: number;
  /**
   * Where turn and job events are posted (`EVENTS_WEBHOOK_URL`, signed with
   * `EVENTS_WEBHOOK_SECRET`); null: none are written. Both must be set.
   */
  eventsWebhook: { url: string; secret: string } | null;
  /** Images over the APIs (`MEDIA_MAX_BYTES`, `MEDIA_IMAGES_IN_CONTEXT`, `VISION`); the bytes need the `MEDIA` binding. */
  media: MediaSettings;
  /**
   * Signed file links (`MEDIA_URL_SECRET`, under `PUBLIC_URL`: lib/media/media_url.ts); null
   * without the secret. `publicUrl` "" : an API reply's links use the request's origin, and a
   * chat platform without file upload gets a note.
   */
  mediaLinks: { secret: string; publicUrl: string } | null;
  /** `MEDIA_RETENTION_DAYS` (default 30): a session's alarm deletes older media; 0: kept. */
  mediaRetentionDays: number;
  /**
   * Memory across chats (`MEMORY`, default off; `MEMORY_MAX_CHARS` 4,000 per user,
   * `MEMORY_FACT_MAX_CHARS` 500 per fact): lib/access/user_memory.ts.
   */
  memory: { on: boolean; maxChars: number; factMaxChars: number };
  /**
   * Daily token caps (`USER_TOKENS_PER_DAY`, `TENANT_TOKENS_PER_DAY`, `SESSION_TOKENS_PER_DAY`;
   * null: none) and the per-turn ceiling (`TURN_MAX_TOKENS`): lib/access/token_budget.ts.
   */
  spend: SpendConfig;
}

/** Tokens a turn reserves against a daily cap when `TURN_MAX_TOKENS` is unset. */
export const DEFAULT_TURN_RESERVE = 4_000;

/** The spend caps as read (see `BatonConfig.spend`). */
export interface SpendConfig {
  userTokensPerDay: number | null;
  tenantTokensPerDay: number | null;
  sessionTokensPerDay: number | null;
  turnMaxTokens: number | null;
  /** What a turn reserves before it starts: `TURN_MAX_TOKENS`, else `DEFAULT_TURN_RESERVE`. */
  turnReserve: number;
  /** `MODEL_PRICES`: per-model prices per million tokens; null: usage in tokens only. */
  modelPrices: ModelPrices | null;
}

/** What a deployment's code adds to the config, beside its env (`Deployment.config`). */
export interface CodeConfig {
  /** How the deployment loads pdf.js (`defineBaton({ pdf })`); absent: PDFs are refused. */
  pdf?: PdfjsLoader;
}

/**
 * Reads the config from the Worker's env (vars and secrets) through the settings table
 * (`settings.ts`): its ranges, values and defaults; a malformed value falls back to its default.
 * `code`: what the deployment's code gives that no env var can (its pdf.js loader).
 */
export function readConfig(vars: object, code: CodeConfig = {}): BatonConfig {
  const env = vars as Record<string, unknown>;
  const llmBaseUrl = textSetting(env, "LLM_BASE_URL");
  return {
    llmBaseUrl,
    llmApiKey: textSetting(env, "LLM_API_KEY"),
    llmModel: textSetting(env, "LLM_MODEL") || (llmBaseUrl ? SETTINGS.LLM_MODEL.default : "echo"),
    llmMaxRetries: countSetting(env, "LLM_MAX_RETRIES"),
    llmTimeoutMs: countSetting(env, "LLM_TIMEOUT_MS"),
    models: listSetting(env, "MODELS"),
    modelFallbacks: parseModelFallbacks(env),
    systemPrompt: textSetting(env, "SYSTEM_PROMPT"),
    maxTurnSteps: countSetting(env, "MAX_TURN_STEPS"),
    historyWindow: countSetting(env, "HISTORY_WINDOW"),
    contextTokens: intSetting(env, "CONTEXT_TOKENS"),
    toolResultMaxChars: countSetting(env, "TOOL_RESULT_MAX_CHARS"),
    turnTimeoutMs: countSetting(env, "TURN_TIMEOUT_MS"),
    turnLeaseMs: countSetting(env, "TURN_LEASE_MS"),
    busyMode: enumSetting(env, "BUSY_INPUT_MODE"),
    maxQueued: countSetting(env, "MAX_QUEUED"),
    busyAck: switchSetting(env, "BUSY_ACK"),
    groupStop: enumSetting(env, "GROUP_STOP"),
    apiKeys: parseTenantKeys(
      textSetting(env, "GATEWAY_API_KEY"),
      textSetting(env, "GATEWAY_API_KEYS"),
    ),
    adminTenants: listSetting(env, "ADMIN_API_KEYS"),
    apiTurnsPerMinute: intSetting(env, "API_TURNS_PER_MINUTE"),
    corsOrigins: listSetting(env, "CORS_ORIGINS").map((o) => o.replace(/\/+$/, "")),
    access: accessConfig({
      mode: enumSetting(env, "ACCESS_POLICY"),
      allowed: listSetting(env, "ALLOWED_USERS"),
      admins: listSetting(env, "ADMIN_USERS"),
      githubAssociations: listSetting(env, "GITHUB_ALLOWED_ASSOCIATIONS"),
      githubRefusal: enumSetting(env, "GITHUB_REFUSAL"),
      userTurnsPerHour: intSetting(env, "USER_TURNS_PER_HOUR"),
      maxPendingPairings: countSetting(env, "MAX_PENDING_PAIRINGS"),
    }),
    approvalTools: new Set(listSetting(env, "APPROVAL_TOOLS")),
    approveRecurringJobs: switchSetting(env, "APPROVE_RECURRING_JOBS"),
    approvalTimeoutMs: {
      chat: countSetting(env, "APPROVAL_TIMEOUT_MS", "chat"),
      api: countSetting(env, "APPROVAL_TIMEOUT_MS", "api"),
    },
    keepAliveMs: countSetting(env, "KEEPALIVE_MS"),
    maxJobsPerSession: countSetting(env, "MAX_JOBS_PER_SESSION"),
    streamReplies: switchSetting(env, "STREAM_REPLIES"),
    maxSessionsPerTenant: intSetting(env, "MAX_SESSIONS_PER_TENANT"),
    maxJobsPerTenant: intSetting(env, "MAX_JOBS_PER_TENANT"),
    maxStreamsPerTenant: intSetting(env, "MAX_STREAMS_PER_TENANT"),
    contextDefaults: contextDefaultsFromEnv(env),
    mcp: {
      ...parseMcpServers(env.MCP_SERVERS, env),
      timeoutMs: countSetting(env, "MCP_TIMEOUT_MS"),
      toolsTtlMs: countSetting(env, "MCP_TOOLS_TTL_MS"),
    },
    logLevel: enumSetting(env, "LOG_LEVEL"),
    hookTimeoutMs: countSetting(env, "HOOK_TIMEOUT_MS"),
    eventsWebhook:
      textSetting(env, "EVENTS_WEBHOOK_URL") && textSetting(env, "EVENTS_WEBHOOK_SECRET")
        ? {
          url: textSetting(env, "EVENTS_WEBHOOK_URL"),
          secret: textSetting(env, "EVENTS_WEBHOOK_SECRET"),
        }
        : null,
    media: {
      maxBytes: countSetting(env, "MEDIA_MAX_BYTES"),
      imagesInContext: countSetting(env, "MEDIA_IMAGES_IN_CONTEXT"),
      vision: enumSetting(env, "VISION"),
      visionModel: textSetting(env, "VISION_MODEL"),
      textMaxChars: countSetting(env, "MEDIA_TEXT_MAX_CHARS"),
      downloadTimeoutMs: countSetting(env, "MEDIA_DOWNLOAD_TIMEOUT_MS"),
      transcribe: _transcribe(env),
      pdf: code.pdf ?? null,
    },
    mediaLinks: textSetting(env, "MEDIA_URL_SECRET")
      ? { secret: textSetting(env, "MEDIA_URL_SECRET"), publicUrl: textSetting(env, "PUBLIC_URL") }
      : null,
    mediaRetentionDays: countSetting(env, "MEDIA_RETENTION_DAYS"),
    memory: {
      on: switchSetting(env, "MEMORY"),
      maxChars: countSetting(env, "MEMORY_MAX_CHARS"),
      factMaxChars: countSetting(env, "MEMORY_FACT_MAX_CHARS"),
    },
    spend: _spend(env),
  };
}

/**
 * Where voice is transcribed: the endpoint when `TRANSCRIBE_BASE_URL` is set; else Workers AI
 * when `TRANSCRIBE_MODEL` names one of its models (`@cf/…`) and the Worker has the `AI` binding
 * (read from the env like a var: wrangler's `[ai] binding = "AI"`); else nowhere (voice refused).
 * Opt-in by the model, so a deployment that binds `AI` for its own tools is not billed for voice.
 */
function _transcribe(env: Record<string, unknown>): MediaSettings["transcribe"] {
  const model = textSetting(env, "TRANSCRIBE_MODEL");
  if (textSetting(env, "TRANSCRIBE_BASE_URL")) {
    return {
      baseUrl: textSetting(env, "TRANSCRIBE_BASE_URL"),
      model: model || SETTINGS.TRANSCRIBE_MODEL.default,
      apiKey: textSetting(env, "TRANSCRIBE_API_KEY") || textSetting(env, "LLM_API_KEY"),
    };
  }
  return model.startsWith("@cf/") && isAiRunner(env.AI) ? { ai: env.AI, model } : null;
}

function _spend(env: Record<string, unknown>): SpendConfig {
  const turnMaxTokens = intSetting(env, "TURN_MAX_TOKENS");
  return {
    userTokensPerDay: intSetting(env, "USER_TOKENS_PER_DAY"),
    tenantTokensPerDay: intSetting(env, "TENANT_TOKENS_PER_DAY"),
    sessionTokensPerDay: intSetting(env, "SESSION_TOKENS_PER_DAY"),
    turnMaxTokens,
    turnReserve: turnMaxTokens ?? DEFAULT_TURN_RESERVE,
    modelPrices: parseModelPrices(textSetting(env, "MODEL_PRICES")),
  };
}

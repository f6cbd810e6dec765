// The settings table's first part: the model, turns and sessions, chat replies, approvals and jobs, MCP, tool context, deployment, hooks; runtime-neutral.
import type { Setting } from "./setting_types.ts";

const _DAY_MS = 24 * 60 * 60 * 1000;

/** The model, turns and sessions, chat replies, approvals and jobs, MCP servers, tool context, deployment and hooks: part of {@link SETTINGS} (settings.ts). */
export const AGENT_SETTINGS = {
  // The model.
  LLM_BASE_URL: {
    kind: "url",
    group: "model",
    shown: "unset → echo model",
    description: "OpenAI-compatible endpoint, e.g. `https://api.openai.com/v1`",
  },
  LLM_API_KEY: { kind: "string", group: "model", secret: true, description: "the provider's key" },
  LLM_MODEL: {
    kind: "string",
    group: "model",
    default: "gpt-4o-mini",
    shown: "`gpt-4o-mini` (`echo` without a base URL)",
    description: "model name sent to the provider, listed by `/v1/models`",
  },
  LLM_MAX_RETRIES: {
    kind: "int",
    group: "model",
    min: 0,
    max: 10,
    default: 3,
    description:
      "retries of a model call on 408/409/429/5xx/connection errors, honouring `Retry-After`",
  },
  LLM_TIMEOUT_MS: {
    kind: "int",
    group: "model",
    min: 1_000,
    max: 600_000,
    default: 120_000,
    description: "per model call attempt",
  },
  SYSTEM_PROMPT: { kind: "string", group: "model", description: "the agent's system prompt" },
  MODELS: {
    kind: "list",
    group: "model",
    shown: "unset → the `model` field is ignored",
    description: "the models a user may pick: `/model NAME` in chat (remembered per session) and " +
      "the `model` field of the OpenAI APIs; a name not listed is refused (API: 400 " +
      "`model_not_allowed`)",
  },
  MODEL_FALLBACKS: {
    kind: "list",
    group: "model",
    description: "models tried in order when the one before fails with 429, 5xx or a timeout: a " +
      "name on `LLM_BASE_URL`, or `name@baseURL` for another endpoint (its key `LLM_API_KEY_<N>`)",
  },
  "LLM_API_KEY_<N>": {
    kind: "string",
    group: "model",
    secret: true,
    family: "number",
    description: "the key of `MODEL_FALLBACKS`' Nth entry (1-based); unset, `LLM_API_KEY` on the " +
      "same endpoint and none on another",
  },
  // Turns and sessions.
  MAX_TURN_STEPS: {
    kind: "int",
    group: "turns",
    min: 1,
    max: 64,
    default: 8,
    description: "model calls per turn (tool-calling loop cap)",
  },
  HISTORY_WINDOW: {
    kind: "int",
    group: "turns",
    min: 2,
    max: 1_000,
    default: 40,
    description: "most recent transcript messages a turn sends to the model",
  },
  CONTEXT_TOKENS: {
    kind: "int",
    group: "turns",
    min: 1_000,
    max: 10_000_000,
    default: 100_000,
    off: true,
    description: "when what a turn would send exceeds this many tokens (the model's own count " +
      "of the last call, plus a quarter token per newer character), the conversation's oldest " +
      "turns are summarised by the model into one message later turns see instead; `off`: never",
  },
  TOOL_RESULT_MAX_CHARS: {
    kind: "int",
    group: "turns",
    min: 1_000,
    max: 1_000_000,
    default: 20_000,
    description: "a tool result longer than this is cut, with a note saying so, before the " +
      "model sees it and the transcript keeps it",
  },
  TURN_TIMEOUT_MS: {
    kind: "int",
    group: "turns",
    min: 1_000,
    max: 840_000,
    default: 600_000,
    description: "a turn is aborted and failed after this long",
  },
  TURN_LEASE_MS: {
    kind: "int",
    group: "turns",
    min: 100,
    max: 600_000,
    default: 30_000,
    description: "watchdog period: a turn whose executor died is recovered this long after its " +
      "claim (an access notice cut off by a restart: this long after it was stored)",
  },
  BUSY_INPUT_MODE: {
    kind: "enum",
    group: "turns",
    values: ["queue", "interrupt", "merge", "steer"],
    default: "queue",
    description: "a message arriving while a turn runs: `queue` (each its own turn, in order), " +
      "`interrupt` (abort the running turn, then run the queue), `merge` (everything that arrives " +
      "during a turn becomes one next turn, joined by newlines), `steer` (given to the running " +
      "turn, whose model reads it at its next step; one that comes too late is queued); " +
      "`/steer TEXT` steers in any mode",
  },
  MAX_QUEUED: {
    kind: "int",
    group: "turns",
    min: 1,
    max: 1_000,
    default: 32,
    description: "messages that may wait per session; one more is refused (API/webhook 429 " +
      "`queue_full`, chat users a short notice)",
  },
  BUSY_ACK: {
    kind: "switch",
    group: "turns",
    default: "on",
    description: '`off` stops the "Queued — I\'ll answer after the current reply." notice ' +
      "(sent at most once per 30 s per session)",
  },
  GROUP_STOP: {
    kind: "enum",
    group: "turns",
    values: ["sender", "anyone"],
    default: "sender",
    description:
      "in a group chat, who may `/stop`, `/new` or `/reset` the running turn: `sender` " +
      '(its sender or an admin, `ADMIN_USERS`; others are told "Not yours") or `anyone`',
  },
  // Chat replies.
  STREAM_REPLIES: {
    kind: "switch",
    group: "chat",
    default: "on",
    description:
      "`off`: no reply previews in chats (typing still shows); see [Chat platforms](../platforms/README.md)",
  },
  REPLY_IN_DOUBT: {
    kind: "enum",
    group: "chat",
    values: ["resend", "skip"],
    default: "resend",
    description: "a reply part cut off by a crash on a platform that cannot be read back " +
      '(Telegram, Discord follow-ups, WhatsApp, Twilio, Teams): `resend` behind a short "may ' +
      'repeat" note, or `skip` it',
  },
  // Approvals and scheduled jobs.
  APPROVAL_TOOLS: {
    kind: "list",
    group: "approvals",
    description:
      "tools whose every call waits for the user's approval (see [Approvals](../guides/approvals.md))",
  },
  APPROVAL_TIMEOUT_MS: {
    kind: "int",
    group: "approvals",
    min: 100,
    max: 7 * _DAY_MS,
    default: _DAY_MS,
    defaults: { chat: _DAY_MS, api: 10 * 60_000 },
    shown: "24 h chat, 10 min API",
    description: "an unanswered approval counts as denied after this long (sets both)",
  },
  APPROVE_RECURRING_JOBS: {
    kind: "switch",
    group: "approvals",
    default: "on",
    description: "`off`: a recurring job the model schedules (`schedule_task` with `every` or " +
      "`cron`) is created without asking (see [Scheduled turns](../guides/jobs.md))",
  },
  MAX_JOBS_PER_SESSION: {
    kind: "int",
    group: "approvals",
    min: 1,
    max: 1_000,
    default: 20,
    description: "scheduled jobs (not done yet) a session may hold; one more is refused (see " +
      "[Scheduled turns](../guides/jobs.md))",
  },
  // MCP servers.
  MCP_SERVERS: {
    kind: "json",
    group: "mcp",
    description: "list of remote MCP servers whose tools the agent may call (see " +
      "[MCP servers](../guides/mcp.md#tools-from-mcp-servers)); a header's `${NAME}` is filled from the env var NAME",
  },
  MCP_TIMEOUT_MS: {
    kind: "int",
    group: "mcp",
    min: 100,
    max: 600_000,
    default: 30_000,
    description: "time limit of one MCP tool call (and of a listing)",
  },
  MCP_TOOLS_TTL_MS: {
    kind: "int",
    group: "mcp",
    min: 100,
    max: _DAY_MS,
    default: 300_000,
    description: "how long a session reuses a server's tool list before listing it again",
  },
  // Tool context.
  "SESSION_DEFAULT_<FIELD>": {
    kind: "string",
    group: "context",
    family: "string",
    description: "value a tool reads for a context field a turn never bound (`PLATFORM`, " +
      "`CHAT_ID`, `CHAT_NAME`, `THREAD_ID`, `USER_ID`, `USER_NAME`, `SESSION_KEY`, `MESSAGE_ID`)",
  },
  // Deployment.
  PUBLIC_URL: {
    kind: "url",
    group: "deployment",
    shown: "the URL the Worker sees",
    description: "the origin (and path prefix) platforms call baton at, where it differs (custom " +
      "domain, proxy): Twilio signs that URL (see " +
      "[SMS and WhatsApp through Twilio](../platforms/twilio.md))",
  },
  KEEPALIVE_MS: {
    kind: "int",
    group: "deployment",
    min: 100,
    max: 60_000,
    default: 15_000,
    description: "keep-alive period of held-open API responses: SSE comments on streams, " +
      "newlines before a paused plain request's JSON body",
  },
  // Hooks and event webhooks.
  HOOK_TIMEOUT_MS: {
    kind: "int",
    group: "hooks",
    min: 10,
    max: 60_000,
    default: 5_000,
    description: "how long a deployment hook may run before the turn goes on without it (see " +
      "[Hooks](../guides/hooks.md))",
  },
  EVENTS_WEBHOOK_URL: {
    kind: "url",
    group: "hooks",
    shown: "unset → none",
    description: "where turn and job events are posted, signed as Standard Webhooks (see " +
      "[Event webhooks](../guides/observability.md#event-webhooks))",
  },
  EVENTS_WEBHOOK_SECRET: {
    kind: "string",
    group: "hooks",
    secret: true,
    description: "the `whsec_…` secret those events are signed with; required with " +
      "`EVENTS_WEBHOOK_URL`",
  },
} as const satisfies Record<string, Setting>;

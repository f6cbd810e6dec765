// The settings table: every env var baton reads, the one source of the Env type, config parsing and docs/reference/settings.md; runtime-neutral.

/** Where a setting is documented: one heading of the configuration reference each. */
export const SETTING_GROUPS = {
  model: "The model",
  turns: "Turns and sessions",
  chat: "Chat replies",
  approvals: "Approvals and scheduled jobs",
  mcp: "MCP servers",
  context: "Tool context",
  deployment: "Deployment",
  hooks: "Hooks and event webhooks",
  media: "Media",
  memory: "Memory across chats",
  spend: "Usage and spend caps",
  logging: "Logs",
  access: "Access control (chat platforms)",
  api: "API keys and tenants",
  "platform:generic": "Generic webhook",
  "platform:telegram": "Telegram",
  "platform:slack": "Slack",
  "platform:discord": "Discord",
  "platform:github": "GitHub",
  "platform:whatsapp": "WhatsApp",
  "platform:line": "LINE",
  "platform:twilio": "Twilio (SMS and WhatsApp)",
  "platform:teams": "Microsoft Teams",
  "platform:google_chat": "Google Chat",
  "platform:email": "Email (Cloudflare Email Routing)",
} as const;

/** A heading of the reference: a key of {@link SETTING_GROUPS}. */
export type SettingGroup = keyof typeof SETTING_GROUPS;

/** What every setting says about itself. */
interface _Common {
  /** Its heading in the reference. */
  group: SettingGroup;
  /** One line for users, continuing "NAME (…):"; links relative to docs/reference/settings.md. */
  description: string;
  /** A secret: `wrangler secret put`, never logged. */
  secret?: true;
  /** The default as users read it, where the parsed default alone would not say it. */
  shown?: string;
  /**
   * A family of names: `<…>` in the name stands for `number` (1, 2, …) or any `string`
   * (e.g. `SESSION_DEFAULT_<FIELD>`), so the Env type takes every member.
   */
  family?: "number" | "string";
}

/** Free text (a token, a prompt, an id). */
export interface TextSetting extends _Common {
  kind: "string" | "url" | "json";
  default?: string;
}

/** A whole number within [min, max]; anything else (unset, malformed, out of range) is `default`. */
export interface IntSetting extends _Common {
  kind: "int";
  min: number;
  max: number;
  /** null: unlimited (the setting is a limit, off unless set). */
  default: number | null;
  /** Per-surface defaults where one setting sets two values (the value named `chat` is `default`). */
  defaults?: Readonly<Record<string, number>>;
  /** `off` (or 0) turns the limit off. */
  off?: true;
}

/** `on` or `off`; anything else is `default`. */
export interface SwitchSetting extends _Common {
  kind: "switch";
  default: "on" | "off";
}

/** One of `values` (trimmed, any case); anything else is `default`. */
export interface EnumSetting extends _Common {
  kind: "enum";
  values: readonly string[];
  default: string;
}

/** A comma-separated list, entries trimmed, empty ones dropped; unset or empty: `default`. */
export interface ListSetting extends _Common {
  kind: "list";
  default?: readonly string[];
}

/** One row of the settings table. */
export type Setting = TextSetting | IntSetting | SwitchSetting | EnumSetting | ListSetting;

const _DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Every setting baton reads from its env (vars and secrets), by name. The `Env` type's settings
 * (`SettingsEnv`), `readConfig`'s ranges and defaults and docs/reference/settings.md
 * (`npm run docs:settings`) all come from here; `settings_test.ts` fails when code reads a name
 * this table lacks, or the table names one nothing reads.
 */
export const SETTINGS = {
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
  // Media.
  MEDIA_MAX_BYTES: {
    kind: "int",
    group: "media",
    min: 1,
    max: 100_000_000,
    default: 20_000_000,
    shown: "20 MB",
    description: "the largest image, audio or file accepted, in bytes: a larger one is refused " +
      "with a 400 naming this limit (a data URL is also held to the 1 MiB request body)",
  },
  MEDIA_IMAGES_IN_CONTEXT: {
    kind: "int",
    group: "media",
    min: 0,
    max: 64,
    default: 4,
    description: "how many of a conversation's newest images go to the model as images; older " +
      "ones as a short text placeholder",
  },
  MEDIA_RETENTION_DAYS: {
    kind: "int",
    group: "media",
    min: 0,
    max: 36_500,
    default: 30,
    description: "days a session keeps a medium after it was last stored: then the session's " +
      "alarm deletes it from `MEDIA` and the conversation shows its placeholder; `0` keeps media " +
      "until the session is erased (or an R2 lifecycle rule removes them)",
  },
  VISION: {
    kind: "enum",
    group: "media",
    values: ["native", "describe", "off"],
    default: "native",
    description: "`native`: images go to the model as image parts (it must take them); " +
      "`describe`: for a text-only model, each image is described once by `VISION_MODEL` and " +
      "the model reads the description; `off`: an image is refused with a 400 (see " +
      "[Media](../guides/media.md))",
  },
  VISION_MODEL: {
    kind: "string",
    group: "media",
    shown: "unset → the turn's model",
    description: "with `VISION=describe`, the vision model (on `LLM_BASE_URL`) that describes " +
      "each image once",
  },
  MEDIA_TEXT_MAX_CHARS: {
    kind: "int",
    group: "media",
    min: 100,
    max: 1_000_000,
    default: 20_000,
    description: "characters of a document's text (text, Markdown, CSV, JSON, PDF) the model " +
      "is given; a longer one is cut, with a note saying so",
  },
  MEDIA_DOWNLOAD_TIMEOUT_MS: {
    kind: "int",
    group: "media",
    min: 1_000,
    max: 600_000,
    default: 30_000,
    shown: "30 s",
    description: "how long fetching one photo, voice note or file from a chat platform may take " +
      "(look-ups and token included): then it is given up and the user told, once",
  },
  TRANSCRIBE_BASE_URL: {
    kind: "url",
    group: "media",
    shown: "unset → voice is not transcribed",
    description: "an OpenAI-compatible endpoint whose `/audio/transcriptions` turns voice notes " +
      "and audio into text, e.g. `https://api.openai.com/v1`; unset, a voice message is " +
      'refused ("voice notes are not transcribed on this deployment"), unless `TRANSCRIBE_MODEL` ' +
      "names a Workers AI model and the Worker has the `AI` binding",
  },
  MEDIA_URL_SECRET: {
    kind: "string",
    group: "media",
    secret: true,
    shown: "unset → no file links",
    description: "the key that signs file links (`GET /media/{id}?exp=…&sig=…`, HMAC-SHA256, a " +
      "day long) under `PUBLIC_URL`: for platforms that fetch media by link (WhatsApp, LINE, " +
      "Twilio), those without file upload, and the APIs' `files` (see [Files out](../guides/media.md#files-out)); " +
      "unset, such a platform gets a note naming the file",
  },
  TRANSCRIBE_MODEL: {
    kind: "string",
    group: "media",
    default: "whisper-1",
    description: "the transcription model sent to `TRANSCRIBE_BASE_URL`; without it, a Workers " +
      "AI Whisper model (`@cf/openai/whisper-large-v3-turbo`, `@cf/openai/whisper`) is run " +
      'through the Worker\'s `AI` binding (wrangler `[ai] binding = "AI"`)',
  },
  TRANSCRIBE_API_KEY: {
    kind: "string",
    group: "media",
    secret: true,
    shown: "unset → `LLM_API_KEY`",
    description: "the transcription endpoint's key",
  },
  // Memory across chats.
  MEMORY: {
    kind: "switch",
    group: "memory",
    default: "off",
    description: "`on`: the model gets `remember` and `recall`, a user's remembered facts are " +
      "offered at the start of each of their turns (one read of their record per turn) and " +
      "`/memory`, `/forget` answer in chat (see [Memory](../guides/long-conversations.md#memory)); off by default: it keeps " +
      "personal data across chats, which a deployer opts into",
  },
  MEMORY_MAX_CHARS: {
    kind: "int",
    group: "memory",
    min: 100,
    max: 100_000,
    default: 4_000,
    description: "characters one user's facts may hold together (all of it is offered to each " +
      "turn): a fact past it is refused, the model told so",
  },
  MEMORY_FACT_MAX_CHARS: {
    kind: "int",
    group: "memory",
    min: 10,
    max: 10_000,
    default: 500,
    description: "characters of one remembered fact: a longer one is refused, the model told so",
  },
  // Usage and spend caps.
  USER_TOKENS_PER_DAY: {
    kind: "int",
    group: "spend",
    min: 1,
    max: 1_000_000_000_000,
    default: null,
    description: "tokens (prompt + completion) per platform user per UTC day, across all their " +
      "sessions, their scheduled jobs' turns included; each turn reserves `TURN_MAX_TOKENS` (else " +
      "4,000) before its message is stored and settles with what it used, so a turn that could pass " +
      "the cap is not started: one notice per day, the message not queued (a job's occurrence is " +
      "skipped); commands do not count",
  },
  TENANT_TOKENS_PER_DAY: {
    kind: "int",
    group: "spend",
    min: 1,
    max: 1_000_000_000_000,
    default: null,
    description: "tokens per API tenant per UTC day, reserved and settled as for " +
      "`USER_TOKENS_PER_DAY`; a turn that could pass it is 429 `budget_exceeded` with `Retry-After` " +
      "and `reset_at` (the next UTC midnight); its API sessions' job occurrences are skipped",
  },
  SESSION_TOKENS_PER_DAY: {
    kind: "int",
    group: "spend",
    min: 1,
    max: 1_000_000_000_000,
    default: null,
    description: "tokens per session per UTC day, summed in the session's own storage, checked " +
      "as a turn starts, before its model call: over it the turn fails `budget_exceeded` (a chat " +
      "gets one notice per day)",
  },
  TURN_MAX_TOKENS: {
    kind: "int",
    group: "spend",
    min: 1,
    max: 100_000_000,
    default: null,
    description: "tokens one turn may use: no model call starts once the turn's tokens plus the " +
      "last call's prompt leave nothing of it, and the turn ends with a note saying so; each call's " +
      "`max_completion_tokens` (or the caller's `max_tokens`) is clamped to what is left; also " +
      "what each turn reserves against the daily caps",
  },
  MODEL_PRICES: {
    kind: "json",
    group: "spend",
    description: "prices per million tokens by model, e.g. " +
      '`{"gpt-4o-mini":{"in":0.15,"out":0.6,"cached":0.075}}` (`cached`: prompt tokens the ' +
      "provider served from its cache, else priced as `in`; the key `*` prices any other model): " +
      "each model call's cost is added where its tokens are summed, and `/usage` and " +
      "`GET /v1/usage` show it; unset: tokens only",
  },
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
  // Platforms: the generic webhook.
  WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:generic",
    secret: true,
    shown: "unset → route refused (403)",
    description: "`whsec_<base64>` secret of `/webhooks/generic`",
  },
  // Telegram.
  TELEGRAM_BOT_TOKEN: {
    kind: "string",
    group: "platform:telegram",
    secret: true,
    description: "the bot's token from @BotFather",
  },
  TELEGRAM_WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:telegram",
    secret: true,
    description: "the webhook's `secret_token`: 1–256 of `A-Z a-z 0-9 _ -`",
  },
  TELEGRAM_API_ROOT: {
    kind: "url",
    group: "platform:telegram",
    default: "https://api.telegram.org",
    description: "the Bot API's root",
  },
  // Slack.
  SLACK_SIGNING_SECRET: {
    kind: "string",
    group: "platform:slack",
    secret: true,
    description: "Basic Information → Signing Secret",
  },
  SLACK_BOT_TOKEN: {
    kind: "string",
    group: "platform:slack",
    secret: true,
    description: "the bot token (`xoxb-…`)",
  },
  SLACK_API_ROOT: {
    kind: "url",
    group: "platform:slack",
    default: "https://slack.com/api",
    description: "the Web API's root",
  },
  // Discord.
  DISCORD_PUBLIC_KEY: {
    kind: "string",
    group: "platform:discord",
    secret: true,
    description: "the application's Public Key (interactions are verified with it)",
  },
  DISCORD_APPLICATION_ID: {
    kind: "string",
    group: "platform:discord",
    secret: true,
    description: "the application's id; no bot token is needed",
  },
  DISCORD_API_ROOT: {
    kind: "url",
    group: "platform:discord",
    default: "https://discord.com/api/v10",
    description: "the HTTP API's root",
  },
  // GitHub.
  GITHUB_WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the repository webhook's secret (a random string)",
  },
  GITHUB_TOKEN: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the bot account's token with Issues (and Pull requests) read & write",
  },
  GITHUB_BOT_LOGIN: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the bot account's login (e.g. `batonbot`): a comment mentioning it starts a turn",
  },
  GITHUB_API_ROOT: {
    kind: "url",
    group: "platform:github",
    default: "https://api.github.com",
    description: "the REST API's root (GitHub Enterprise Server: `https://HOST/api/v3`)",
  },
  // WhatsApp.
  WHATSAPP_APP_SECRET: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the Meta app's secret (signs every delivery)",
  },
  WHATSAPP_ACCESS_TOKEN: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the access token replies are sent with",
  },
  WHATSAPP_VERIFY_TOKEN: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the verify token of the webhook's `GET` handshake",
  },
  WHATSAPP_PHONE_NUMBER_ID: {
    kind: "string",
    group: "platform:whatsapp",
    description: "the business phone number's id (a var or secret)",
  },
  WHATSAPP_API_ROOT: {
    kind: "url",
    group: "platform:whatsapp",
    default: "https://graph.facebook.com/v21.0",
    description: "the Graph API's root",
  },
  // LINE.
  LINE_CHANNEL_SECRET: {
    kind: "string",
    group: "platform:line",
    secret: true,
    description: "the channel secret (signs every delivery)",
  },
  LINE_CHANNEL_ACCESS_TOKEN: {
    kind: "string",
    group: "platform:line",
    secret: true,
    description: "the channel access token replies are pushed with",
  },
  LINE_API_ROOT: {
    kind: "url",
    group: "platform:line",
    default: "https://api.line.me",
    description: "the Messaging API's root",
  },
  LINE_DATA_API_ROOT: {
    kind: "url",
    group: "platform:line",
    default: "https://api-data.line.me",
    description: "the root media sent to the bot are downloaded from (the message content API)",
  },
  // Twilio.
  TWILIO_ACCOUNT_SID: {
    kind: "string",
    group: "platform:twilio",
    secret: true,
    description: "the account's SID",
  },
  TWILIO_AUTH_TOKEN: {
    kind: "string",
    group: "platform:twilio",
    secret: true,
    description: "the account's auth token (signs every request, `X-Twilio-Signature`)",
  },
  TWILIO_API_ROOT: {
    kind: "url",
    group: "platform:twilio",
    default: "https://api.twilio.com",
    description: "the REST API's root",
  },
  // Microsoft Teams.
  TEAMS_APP_ID: {
    kind: "string",
    group: "platform:teams",
    secret: true,
    description: "the bot's Microsoft App ID (the audience of the Bot Connector's tokens)",
  },
  TEAMS_APP_PASSWORD: {
    kind: "string",
    group: "platform:teams",
    secret: true,
    description: "the bot's client secret (replies are sent with a token it buys)",
  },
  TEAMS_TENANT_ID: {
    kind: "string",
    group: "platform:teams",
    description: "a single-tenant bot's tenant: its token comes from that tenant's endpoint",
  },
  TEAMS_OPENID_URL: {
    kind: "url",
    group: "platform:teams",
    default: "https://login.botframework.com/v1/.well-known/openidconfiguration",
    description: "where the Bot Connector's signing keys are found",
  },
  TEAMS_TOKEN_URL: {
    kind: "url",
    group: "platform:teams",
    shown:
      "`https://login.microsoftonline.com/<TEAMS_TENANT_ID or botframework.com>/oauth2/v2.0/token`",
    description: "where the bot's token is bought",
  },
  // Google Chat.
  GOOGLE_CHAT_AUDIENCE: {
    kind: "string",
    group: "platform:google_chat",
    secret: true,
    description: "the project number, or the endpoint URL exactly as configured, that Google " +
      "Chat names as the audience of its tokens",
  },
  GOOGLE_CHAT_SERVICE_ACCOUNT: {
    kind: "json",
    group: "platform:google_chat",
    secret: true,
    description: "the service account's whole key JSON (its private key signs the token " +
      "assertion and is never logged)",
  },
  GOOGLE_CHAT_ADDON_PROJECT_NUMBER: {
    kind: "string",
    group: "platform:google_chat",
    description: "a Workspace add-on app's project number: its tokens come from that project's " +
      "add-on service agent (with a URL audience)",
  },
  GOOGLE_CHAT_JWKS_URL: {
    kind: "url",
    group: "platform:google_chat",
    shown: "Chat's keys, or Google's OIDC keys for a URL audience",
    description: "where the keys of Chat's tokens are found",
  },
  GOOGLE_CHAT_TOKEN_URL: {
    kind: "url",
    group: "platform:google_chat",
    default: "https://oauth2.googleapis.com/token",
    description: "where the service account's token is bought",
  },
  GOOGLE_CHAT_API_ROOT: {
    kind: "url",
    group: "platform:google_chat",
    default: "https://chat.googleapis.com/v1",
    description: "the Chat API's root",
  },
  // Email.
  EMAIL_FROM: {
    kind: "string",
    group: "platform:email",
    shown: "the address the mail was sent to",
    description: "the address replies and notices come from (a domain on Email Routing; the " +
      "`EMAIL_OUT` `send_email` binding sends them)",
  },
  EMAIL_ALLOWED_DOMAINS: {
    kind: "list",
    group: "platform:email",
    shown: "any domain",
    description: "comma-separated sender domains whose mail is read at all (others are dropped " +
      "unanswered); senders still pass access control, so with `email:*` in `ALLOWED_USERS` " +
      "everyone at these domains may write",
  },
  EMAIL_REQUIRE_AUTH: {
    kind: "switch",
    group: "platform:email",
    default: "on",
    description: "refuse mail whose sender Email Routing did not authenticate (DMARC pass, or " +
      "SPF or DKIM pass for the From domain)",
  },
} as const satisfies Record<string, Setting>;

/** A setting's name as the table spells it (a family's with its `<…>` placeholder). */
export type SettingName = keyof typeof SETTINGS;

type _Table = typeof SETTINGS;

/** The names of one kind of setting, for the typed readers. */
export type SettingNameOf<K extends Setting["kind"]> = {
  [N in SettingName]: _Table[N] extends { kind: K } ? N : never;
}[SettingName];

/** A family's env names: `LLM_API_KEY_<N>` → `LLM_API_KEY_${number}`. */
type _FamilyKey<N, S> = N extends `${infer P}<${string}>`
  ? `${P}${S extends { family: "number" } ? number : string}`
  : never;

/**
 * The settings fields of the Worker's `Env`, derived from {@link SETTINGS}: each an optional string
 * (vars and secrets are strings), a family a pattern of names.
 */
export type SettingsEnv =
  & { [N in SettingName as N extends `${string}<${string}>` ? never : N]?: string }
  & { [N in SettingName as _FamilyKey<N, _Table[N]>]?: string };

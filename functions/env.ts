// The Worker's bindings, vars and secrets; Workers types only.

/**
 * Bindings and settings of a baton deployment (see README, Configuration). The Durable Object
 * namespaces are bare here: the classes import `Env`, so their RPC types are put on the stubs by
 * their clients (`sessionStub`, `accessStub`), and this file stays below every class it binds.
 */
export interface Env {
  /** The session objects, one per session key (typed by `sessionStub`). */
  SESSIONS: DurableObjectNamespace;
  /** Access records: one per sender, per API tenant, and the owner's pairing directory (typed by `accessStub`). */
  ACCESS: DurableObjectNamespace;
  /** Conversation pointers: one per conversation state of a request without X-Session-Id (typed by its client). */
  CONVERSATIONS: DurableObjectNamespace;
  /** Idempotency-Key records: one per tenant's key (typed by its client, functions/_idempotency.ts). */
  IDEMPOTENCY_KEYS: DurableObjectNamespace;
  /** The web console's files (`[assets]`, built into `.console/`); absent in bare test Workers. */
  ASSETS?: Fetcher;
  /** The session directory (D1, `migrations/`); optional: without it `GET /v1/sessions` is a 503. */
  DIRECTORY?: D1Database;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_MAX_RETRIES?: string;
  LLM_TIMEOUT_MS?: string;
  SYSTEM_PROMPT?: string;
  MAX_TURN_STEPS?: string;
  HISTORY_WINDOW?: string;
  TURN_TIMEOUT_MS?: string;
  TURN_LEASE_MS?: string;
  BUSY_INPUT_MODE?: string;
  MAX_QUEUED?: string;
  BUSY_ACK?: string;
  /** Who may /stop, /new or /reset a turn in a group chat: sender (its sender or an admin; the default) or anyone. */
  GROUP_STOP?: string;
  APPROVAL_TOOLS?: string;
  /** A recurring job the model schedules waits for the user's approval: on (the default) or off. */
  APPROVE_RECURRING_JOBS?: string;
  APPROVAL_TIMEOUT_MS?: string;
  KEEPALIVE_MS?: string;
  /** Chat replies previewed as they grow (on, the default, or off). */
  STREAM_REPLIES?: string;
  MAX_JOBS_PER_SESSION?: string;
  /** JSON list of remote MCP servers whose tools the agent may call (see README, "MCP servers"). */
  MCP_SERVERS?: string;
  MCP_TIMEOUT_MS?: string;
  MCP_TOOLS_TTL_MS?: string;
  /** Lowest level logged: debug, info (default), warn or error. */
  LOG_LEVEL?: string;
  REPLY_IN_DOUBT?: string;
  GATEWAY_API_KEY?: string;
  GATEWAY_API_KEYS?: string;
  ADMIN_API_KEYS?: string;
  API_TURNS_PER_MINUTE?: string;
  /** Sessions an API tenant may hold (default unlimited): one more is 403 `session_limit`. */
  MAX_SESSIONS_PER_TENANT?: string;
  /** Jobs not done an API tenant may hold across its sessions (default 200; `off`): one more is 429 `job_limit`. */
  MAX_JOBS_PER_TENANT?: string;
  /** Streams an API tenant may have open at once (default unlimited): one more is 429 `stream_limit`. */
  MAX_STREAMS_PER_TENANT?: string;
  /** Pairing codes waiting for the owner, at most, per platform (default 50). */
  MAX_PENDING_PAIRINGS?: string;
  CORS_ORIGINS?: string;
  ACCESS_POLICY?: string;
  ALLOWED_USERS?: string;
  ADMIN_USERS?: string;
  GITHUB_ALLOWED_ASSOCIATIONS?: string;
  GITHUB_REFUSAL?: string;
  USER_TURNS_PER_HOUR?: string;
  WEBHOOK_SECRET?: string;
  TELEGRAM_WEBHOOK_SECRET?: string;
  TELEGRAM_BOT_TOKEN?: string;
  TELEGRAM_API_ROOT?: string;
  SLACK_SIGNING_SECRET?: string;
  SLACK_BOT_TOKEN?: string;
  SLACK_API_ROOT?: string;
  DISCORD_PUBLIC_KEY?: string;
  DISCORD_APPLICATION_ID?: string;
  DISCORD_API_ROOT?: string;
  GITHUB_WEBHOOK_SECRET?: string;
  GITHUB_TOKEN?: string;
  GITHUB_BOT_LOGIN?: string;
  GITHUB_API_ROOT?: string;
  WHATSAPP_APP_SECRET?: string;
  WHATSAPP_VERIFY_TOKEN?: string;
  WHATSAPP_ACCESS_TOKEN?: string;
  WHATSAPP_PHONE_NUMBER_ID?: string;
  WHATSAPP_API_ROOT?: string;
  LINE_CHANNEL_SECRET?: string;
  LINE_CHANNEL_ACCESS_TOKEN?: string;
  LINE_API_ROOT?: string;
  TWILIO_ACCOUNT_SID?: string;
  TWILIO_AUTH_TOKEN?: string;
  TWILIO_API_ROOT?: string;
  TEAMS_APP_ID?: string;
  TEAMS_APP_PASSWORD?: string;
  /** A single-tenant bot's tenant: its token comes from that tenant's endpoint. */
  TEAMS_TENANT_ID?: string;
  TEAMS_OPENID_URL?: string;
  TEAMS_TOKEN_URL?: string;
  /** The project number, or the endpoint URL, Google Chat names as the audience of its tokens. */
  GOOGLE_CHAT_AUDIENCE?: string;
  /** A Workspace add-on app's project number: its tokens come from that project's add-on service agent. */
  GOOGLE_CHAT_ADDON_PROJECT_NUMBER?: string;
  /** The service account's key JSON (a secret: its private key signs the token assertion). */
  GOOGLE_CHAT_SERVICE_ACCOUNT?: string;
  GOOGLE_CHAT_JWKS_URL?: string;
  GOOGLE_CHAT_TOKEN_URL?: string;
  GOOGLE_CHAT_API_ROOT?: string;
  /** The origin (and path prefix) callers reach baton at, where it differs from the Worker's URL: signed by Twilio. */
  PUBLIC_URL?: string;
}

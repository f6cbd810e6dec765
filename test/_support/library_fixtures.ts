// The names test/_support/library_worker.ts is defined with and test/library_test.ts asserts on (chats, models, prompts, hook triggers); runtime-neutral.

/** A message whose text holds this is dropped by the worker's `messageReceived` hook. */
export const DROP_MARK = "#private";

/** A turn whose message holds this has a `turnStart` hook that hangs far past `HOOK_TIMEOUT_MS`. */
export const HANG_MARK = "#slow-start";

/** A turn whose reply holds this has a `turnEnd` hook that throws `TURN_END_ERROR`. */
export const THROW_MARK = "#boom";

/** What the throwing `turnEnd` hook throws (looked for in the Worker's log). */
export const TURN_END_ERROR = "library test: turnEnd blew up";

/** The `HOOK_TIMEOUT_MS` the test Worker runs with: low, so a hanging hook is cut off soon. */
export const HOOK_TIMEOUT_MS = 200;

/** How long the hanging `turnStart` hook would take: far past `HOOK_TIMEOUT_MS`. */
export const HANG_MS = 60_000;

/** The tool the `toolCall` hook denies, and what its `run` would answer had it run. */
export const DENIED_TOOL = "delete_everything";
export const DENIED_TOOL_RESULT = "deleted everything";
/** The reason the `toolCall` hook gives for denying `DENIED_TOOL`. */
export const DENY_REASON = "nothing gets deleted in a library test";

/** `LLM_MODEL` as the test Worker's var: the model of a turn no platform or channel names one for. */
export const DEFAULT_MODEL = "library-default-model";
/** `platforms.telegram.model`. */
export const TELEGRAM_MODEL = "library-telegram-model";

/** The Telegram chat with channel options of its own (a chat id the driver's `newChat()` never makes). */
export const CHANNEL_CHAT = "7900001";
/** `platforms.telegram.channels[CHANNEL_CHAT].model`. */
export const CHANNEL_MODEL = "library-channel-model";
/** `platforms.telegram.channels[CHANNEL_CHAT].systemPrompt`. */
export const CHANNEL_PROMPT = "You are the library test's helper for one Telegram chat only.";
/** The tool `platforms.telegram.channels[CHANNEL_CHAT].tools` adds. */
export const CHANNEL_TOOL = "channel_lookup";

/** The start of the deployment's prompt (a function: it ends with ` on <platform>.`). */
export const DEPLOYMENT_PROMPT = "You are the library test's deployment-wide helper";

/**
 * Where the worker's second deployment (`defineBaton({ pdf })`, its own session objects under
 * `READER_SESSIONS`) answers: its routes under this prefix. The first reads no PDFs.
 */
export const READER_PREFIX = "/reader";

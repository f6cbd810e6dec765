// The settings table's part on what a conversation carries and costs: media, memory across chats, usage and spend caps; runtime-neutral.
import type { Setting } from "./setting_types.ts";

/** Media, memory across chats, usage and spend caps: part of {@link SETTINGS} (settings.ts). */
export const CONTENT_SETTINGS = {
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
} as const satisfies Record<string, Setting>;

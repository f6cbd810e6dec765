// What a setting of the settings table says about itself: its kinds and the reference's headings; runtime-neutral.

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

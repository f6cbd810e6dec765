// The settings table: every env var baton reads, the one source of the Env type, config parsing and docs/reference/settings.md; runtime-neutral.
import { AGENT_SETTINGS } from "./agent_settings.ts";
import { ACCESS_SETTINGS } from "./access_settings.ts";
import { CONTENT_SETTINGS } from "./content_settings.ts";
import { PLATFORM_SETTINGS } from "./platform_settings.ts";
import type { Setting } from "./setting_types.ts";

export * from "./setting_types.ts";

/**
 * Every setting baton reads from its env (vars and secrets), by name. The `Env` type's settings
 * (`SettingsEnv`), `readConfig`'s ranges and defaults and docs/reference/settings.md
 * (`npm run docs:settings`) all come from here; `settings_test.ts` fails when code reads a name
 * this table lacks, or the table names one nothing reads.
 */
// One table in four files (each part a concern of its own); the order here is the reference's order.
export const SETTINGS = {
  ...AGENT_SETTINGS,
  ...CONTENT_SETTINGS,
  ...ACCESS_SETTINGS,
  ...PLATFORM_SETTINGS,
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

// Typed readers of one setting from the Worker's env, with the range, values and default the settings table gives it; runtime-neutral.
import {
  type EnumSetting,
  type IntSetting,
  type Setting,
  type SettingNameOf,
  SETTINGS,
} from "./settings.ts";

/** The env as read: vars and secrets by name (other values are ignored). */
export type EnvVars = Readonly<Record<string, unknown>>;

/** A setting's raw text (of any kind), or "" when unset (or not a string). */
export function textSetting(env: EnvVars, name: SettingNameOf<Setting["kind"]>): string {
  const value = env[name];
  return typeof value === "string" ? value : "";
}

/**
 * A whole-number setting: within the table's [min, max], else its default (null: unlimited).
 * `surface` picks one of its per-surface `defaults`; a setting with `off` reads `off` or 0 as null.
 */
export function intSetting(
  env: EnvVars,
  name: SettingNameOf<"int">,
  surface?: string,
): number | null {
  const spec: IntSetting = SETTINGS[name];
  const fallback = surface && spec.defaults ? spec.defaults[surface] : spec.default;
  const value = env[name];
  if (spec.off) {
    const text = (typeof value === "string" ? value : "").trim().toLowerCase();
    if (text === "off" || text === "0") return null;
  }
  const n = typeof value === "number"
    ? value
    : typeof value === "string" && value
    ? Number(value)
    : NaN;
  return Number.isInteger(n) && n >= spec.min && n <= spec.max ? n : fallback ?? null;
}

/** An int setting that always has a default (a range, never unlimited): its number. */
export function countSetting(env: EnvVars, name: SettingNameOf<"int">, surface?: string): number {
  const n = intSetting(env, name, surface);
  if (n === null) throw new Error(`${name} has no default`);
  return n;
}

/** An on/off setting (trimmed, any case); anything else is the table's default. */
export function switchSetting(env: EnvVars, name: SettingNameOf<"switch">): boolean {
  const text = _lower(env[name]);
  return text === "on" ? true : text === "off" ? false : SETTINGS[name].default === "on";
}

/** An enum setting: one of the table's values (trimmed, any case), else its default. */
export function enumSetting<N extends SettingNameOf<"enum">>(
  env: EnvVars,
  name: N,
): (typeof SETTINGS)[N]["values"][number] {
  const spec: EnumSetting = SETTINGS[name];
  const text = _lower(env[name]);
  return (spec.values.find((v) => v === text) ?? spec.default) as (typeof SETTINGS)[N]["values"][
    number
  ];
}

/** A comma-separated list, entries trimmed, empty ones dropped; unset or blank: the table's default. */
export function listSetting(env: EnvVars, name: SettingNameOf<"list">): string[] {
  const value = env[name];
  if (typeof value !== "string" || !value.trim()) {
    const spec = SETTINGS[name];
    return "default" in spec ? [...spec.default] : [];
  }
  return value.split(",").map((v) => v.trim()).filter(Boolean);
}

function _lower(value: unknown): string {
  return typeof value === "string" ? value.trim().toLowerCase() : "";
}

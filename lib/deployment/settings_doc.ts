// The settings reference (docs/reference/settings.md) rendered from the settings table (unwrapped Markdown); runtime-neutral.
import { type Setting, SETTING_GROUPS, type SettingGroup, SETTINGS } from "./settings.ts";

/** A generated section opens with this marker, optionally naming its groups: `<!-- settings:begin access api -->`. */
export const SETTINGS_BEGIN = "<!-- settings:begin";
/** …and ends with this one. */
export const SETTINGS_END = "<!-- settings:end -->";

const _SECTION = /<!-- settings:begin([^>]*?)\s*-->\n[\s\S]*?<!-- settings:end -->/g;

/**
 * The reference of some groups: a heading per group (so other pages can link to it), then one list
 * item per setting, one line each (`deno fmt` wraps them). Every fact comes from the table, so the
 * docs cannot drift.
 */
export function settingsMarkdown(groups: readonly SettingGroup[]): string {
  const blocks = groups.map((group) => {
    const items = Object.entries(SETTINGS as Record<string, Setting>)
      .filter(([, spec]) => spec.group === group)
      .map(([name, spec]) => `- ${settingLine(name, spec)}`);
    return `## ${SETTING_GROUPS[group]}\n\n${items.join("\n")}`;
  });
  return blocks.join("\n\n");
}

/** One setting as users read it: "`NAME` (kind; default …): description". */
export function settingLine(name: string, spec: Setting): string {
  const facts = [_kindText(spec), _defaultText(spec)].filter(Boolean).join("; ");
  return `\`${name}\`${facts ? ` (${facts})` : ""}: ${spec.description}`;
}

/**
 * `page` with every marked section rendered again: a section naming groups gets those, the one
 * without names gets every group no other section names. The caller formats the result.
 */
export function renderSettingsSections(page: string): string {
  const named = new Set<string>();
  for (const match of page.matchAll(_SECTION)) {
    for (const group of _groupsOf(match[1])) named.add(group);
  }
  const rest = (Object.keys(SETTING_GROUPS) as SettingGroup[]).filter((g) => !named.has(g));
  return page.replace(_SECTION, (_, spec: string) => {
    const groups = _groupsOf(spec);
    const body = settingsMarkdown(groups.length ? groups : rest);
    return `${SETTINGS_BEGIN}${spec} -->\n\n${body}\n\n${SETTINGS_END}`;
  });
}

/** The marked sections' text, begin to end marker, in order. */
export function settingsSections(page: string): string[] {
  return [...page.matchAll(_SECTION)].map((m) => m[0]);
}

function _groupsOf(spec: string): SettingGroup[] {
  const names = spec.trim().split(/\s+/).filter(Boolean);
  for (const name of names) {
    if (!(name in SETTING_GROUPS)) throw new Error(`settings section names unknown group ${name}`);
  }
  return names as SettingGroup[];
}

function _kindText(spec: Setting): string {
  const secret = spec.secret ? "secret" : "";
  switch (spec.kind) {
    case "url":
      return [secret, "URL"].filter(Boolean).join(" ");
    case "json":
      return [secret, "JSON"].filter(Boolean).join(" ");
    case "list":
      return [secret, "comma-separated"].filter(Boolean).join(", ");
    case "int":
      return `${spec.min}–${spec.max}${spec.off ? " or `off`" : ""}`;
    case "switch":
      return "`on` or `off`";
    case "enum":
      return _orList(spec.values.map((v) => `\`${v}\``));
    default:
      return secret;
  }
}

function _defaultText(spec: Setting): string {
  if (spec.shown) return `default ${spec.shown}`;
  switch (spec.kind) {
    case "int":
      return spec.default === null ? "default unlimited" : `default \`${spec.default}\``;
    case "list":
      return spec.default ? `default \`${spec.default.join(",")}\`` : "";
    default:
      return spec.default === undefined ? "" : `default \`${spec.default}\``;
  }
}

function _orList(items: string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

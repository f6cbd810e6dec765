// Unit tests of the settings table: it, the Env type, readConfig, the code's reads and docs/reference/settings.md agree; runs under Deno.
import { assert, assertEquals } from "@std/assert";
import { LOG_LEVELS } from "../runtime/mod.ts";
import { GROUP_STOP_MODES } from "../session/group_stop.ts";
import { generatedSettingsPage, SETTINGS_PAGE } from "../../scripts/settings_doc.ts";
import { readConfig } from "./config.ts";
import { type IntSetting, type Setting, SETTING_GROUPS, SETTINGS } from "./settings.ts";
import { settingsSections } from "./settings_doc.ts";

const _ROOT = new URL("../../", import.meta.url);
const _TABLE = SETTINGS as Record<string, Setting>;
/** A family's fixed part: `LLM_API_KEY_<N>` → `LLM_API_KEY_`. */
const _prefix = (name: string) => name.replace(/<[^>]*>$/, "");
const _families = Object.keys(_TABLE).filter((n) => n.includes("<"));

/** Every non-test TypeScript file under lib/ and functions/, by path. */
async function _sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: URL, path: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const child = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) await walk(child, `${path}${entry.name}/`);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        files.set(`${path}${entry.name}`, await Deno.readTextFile(child));
      }
    }
  };
  for (const top of ["lib/", "functions/"]) await walk(new URL(top, _ROOT), top);
  return files;
}

/** The fields written out in functions/env.ts's `interface Env` (its bindings, nothing else). */
async function _envFields(): Promise<{ fields: string[]; text: string }> {
  const text = await Deno.readTextFile(new URL("functions/env.ts", _ROOT));
  const body = text.slice(text.indexOf("export interface Env"));
  const fields = [...body.matchAll(/^ {2}([A-Za-z_][A-Za-z0-9_]*)\??:/gm)].map((m) => m[1]);
  return { fields, text };
}

/** The env names the code reads: `env.X`, `env[\`X_${…}\`]`, the table's readers, adapters' `requiredEnv`, `apiRoot`. */
function _reads(files: Map<string, string>): Map<string, string> {
  const reads = new Map<string, string>();
  const patterns = [
    /\benv\.([A-Z][A-Z0-9_]+)\b/g,
    /\benv\[`([A-Z][A-Z0-9_]*_)\$\{/g,
    /\b[a-z]+Setting\(\s*env,\s*"([A-Z][A-Z0-9_]+)"/g,
    /\bapiRoot\(\s*env,\s*"([A-Z][A-Z0-9_]+)"/g,
    /\btext\("([A-Z][A-Z0-9_]+)"\)/g,
    /\bSETTINGS\.([A-Z][A-Z0-9_]+)\b/g,
  ];
  for (const [path, text] of files) {
    if (path === "functions/env.ts" || path.startsWith("lib/deployment/setting")) continue;
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) reads.set(m[1], path);
    }
    for (const m of text.matchAll(/\brequiredEnv:\s*\[([^\]]*)\]/g)) {
      for (const name of m[1].matchAll(/"([A-Z][A-Z0-9_]+)"/g)) reads.set(name[1], path);
    }
  }
  return reads;
}

Deno.test("SETTINGS entries are well formed: names, groups, ranges, defaults among values", () => {
  for (const [name, spec] of Object.entries(_TABLE)) {
    assert(/^[A-Z][A-Z0-9_]*(<[A-Z]+>)?$/.test(name), `${name}: a name is UPPER_SNAKE`);
    assert(spec.group in SETTING_GROUPS, `${name}: unknown group ${spec.group}`);
    assert(spec.description && !spec.description.endsWith("."), `${name}: one line, no full stop`);
    assertEquals(name.includes("<"), spec.family !== undefined, `${name}: family iff <…>`);
    if (spec.kind === "int") {
      assert(spec.min <= spec.max, `${name}: min ≤ max`);
      for (const d of [spec.default, ...Object.values(spec.defaults ?? {})]) {
        assert(d === null || (d >= spec.min && d <= spec.max), `${name}: default in range`);
      }
    }
    if (spec.kind === "enum") {
      assert(spec.values.includes(spec.default), `${name}: default a value`);
    }
  }
  assertEquals([...SETTINGS.GROUP_STOP.values], [...GROUP_STOP_MODES]);
  assertEquals([...SETTINGS.LOG_LEVEL.values].sort(), [...LOG_LEVELS].sort());
});

Deno.test("SETTINGS: every name the code reads is in the table, and every entry is read", async () => {
  const files = await _sources();
  const reads = _reads(files);
  const { fields: bindings } = await _envFields();
  const known = (name: string) =>
    name in _TABLE || bindings.includes(name) || _families.some((f) => _prefix(f) === name);
  const missing = [...reads].filter(([name]) => !known(name)).map(([n, path]) => `${n} (${path})`);
  assertEquals(missing, [], "read by the code but missing from SETTINGS");
  const unread = Object.keys(_TABLE).filter((name) =>
    name.includes("<") ? !reads.has(_prefix(name)) : !reads.has(name)
  );
  assertEquals(unread, [], "in SETTINGS but read nowhere in lib/ or functions/");
});

Deno.test("Env takes its settings from SETTINGS: no setting written out in functions/env.ts", async () => {
  const { fields, text } = await _envFields();
  assert(/export interface Env extends SettingsEnv\b/.test(text), "Env extends SettingsEnv");
  const handWritten = fields.filter((f) =>
    f in _TABLE || _families.some((family) => f.startsWith(_prefix(family)))
  );
  assertEquals(handWritten, [], "settings written out by hand in functions/env.ts");
});

Deno.test("readConfig() follows the table: a changed default, range or value changes parsing", () => {
  const table = SETTINGS as unknown as Record<string, Record<string, unknown>>;
  const saved = structuredClone(table);
  try {
    table.MAX_QUEUED.default = 7;
    table.HISTORY_WINDOW.max = 50;
    table.BUSY_ACK.default = "off";
    table.LOG_LEVEL.default = "warn";
    table.ADMIN_API_KEYS.default = ["ops"];
    table.MAX_JOBS_PER_TENANT.default = 9;
    const config = readConfig({ HISTORY_WINDOW: "51" });
    assertEquals(
      [config.maxQueued, config.historyWindow, config.busyAck, config.logLevel],
      [7, 40, false, "warn"],
    );
    assertEquals([config.adminTenants, config.maxJobsPerTenant], [["ops"], 9]);
  } finally {
    for (const name of Object.keys(saved)) table[name] = saved[name];
  }
  assertEquals(readConfig({}).maxQueued, 32);
});

Deno.test("readConfig().access agrees with the table's defaults and ranges", () => {
  const spec = (name: string) => _TABLE[name] as IntSetting;
  const access = readConfig({}).access;
  assertEquals(access.mode, SETTINGS.ACCESS_POLICY.default);
  assertEquals([...access.githubAssociations], [...SETTINGS.GITHUB_ALLOWED_ASSOCIATIONS.default]);
  assertEquals(access.githubRefusalComment, _TABLE.GITHUB_REFUSAL.default === "comment");
  assertEquals(access.userTurnsPerHour, SETTINGS.USER_TURNS_PER_HOUR.default);
  assertEquals(access.maxPendingPairings, SETTINGS.MAX_PENDING_PAIRINGS.default);
  const pend = spec("MAX_PENDING_PAIRINGS");
  const pending = (v: number) => readConfig({ MAX_PENDING_PAIRINGS: String(v) }).access;
  assertEquals(
    [pend.min - 1, pend.min, pend.max, pend.max + 1].map((v) => pending(v).maxPendingPairings),
    [pend.default, pend.min, pend.max, pend.default],
  );
  const quota = spec("USER_TURNS_PER_HOUR");
  const turns = (v: number) => readConfig({ USER_TURNS_PER_HOUR: String(v) }).access;
  assertEquals(
    [quota.min - 1, quota.min, quota.max, quota.max + 1].map((v) => turns(v).userTurnsPerHour),
    [null, quota.min, quota.max, null],
  );
});

Deno.test("generatedSettingsPage(): docs/reference/settings.md is what the table generates (npm run docs:settings)", async () => {
  const page = await Deno.readTextFile(SETTINGS_PAGE);
  const sections = settingsSections(page);
  assert(sections.length > 0, "docs/reference/settings.md has a <!-- settings:begin --> section");
  assertEquals(
    sections,
    settingsSections(await generatedSettingsPage(page)),
    "docs/reference/settings.md differs from the table: run `npm run docs:settings`",
  );
  for (const name of Object.keys(_TABLE)) {
    assert(sections.some((s) => s.includes(`\`${name}\``)), `${name} is in the settings reference`);
  }
});

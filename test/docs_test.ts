// The docs agree with the code: settings, routes and chat commands in docs/reference/, and every relative link and anchor; runs under Deno (no workerd).
/// <reference types="@cloudflare/workers-types" />
// (functions/routes.ts is typed against the Workers globals; the workerd tests get them from miniflare.)
import { assert, assertEquals } from "@std/assert";
import { batonApp } from "../functions/routes.ts";
import { openApiPath } from "../lib/api/openapi_builder.ts";
import { COMMAND_WORDS } from "../lib/chat/session_commands.ts";
import { deploymentOf } from "../lib/deployment/mod.ts";
import { type Setting, SETTINGS } from "../lib/deployment/settings.ts";

const _ROOT = new URL("../", import.meta.url);
const _TABLE = SETTINGS as Record<string, Setting>;

Deno.test("docs/reference/settings.md names every setting of the table, and no other", async () => {
  const page = _prose(await _read("docs/reference/settings.md"), { keepCode: true });
  const missing = Object.keys(_TABLE).filter((name) => !page.includes(`\`${name}\``));
  assertEquals(missing, [], "settings missing from docs/reference/settings.md");
  const named = new Set(
    [...page.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_<>]*[A-Z0-9>])`/g)].map((m) => m[1]),
  );
  const bindings = await _bindingNames();
  const unknown = [...named].filter((name) => !_isSetting(name) && !bindings.has(name));
  assertEquals(unknown, [], "names in docs/reference/settings.md that are no setting");
});

Deno.test("docs/reference/http-api.md lists every route the Worker registers, and no other", async () => {
  const registered = new Set(
    batonApp(deploymentOf()).routes.filter((r) => r.method !== "ALL").map((r) =>
      `${r.method} ${openApiPath(r.path)}`
    ),
  );
  const page = _prose(await _read("docs/reference/http-api.md"), { keepCode: true });
  const documented = new Set(
    [...page.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s?]*)[^`]*`/g)].map((m) =>
      `${m[1]} ${m[2]}`
    ),
  );
  assertEquals([...registered].filter((r) => !documented.has(r)), [], "routes not in http-api.md");
  assertEquals([...documented].filter((d) => !registered.has(d)), [], "documented, not routed");
});

Deno.test("docs/reference/commands.md lists every chat command, and no other", async () => {
  const page = _prose(await _read("docs/reference/commands.md"), { keepCode: true });
  const documented = new Set([...page.matchAll(/`\/([a-z_]+)(?=[\s`\]])/g)].map((m) => m[1]));
  assertEquals(COMMAND_WORDS.filter((c) => !documented.has(c)), [], "commands not in commands.md");
  assertEquals([...documented].filter((c) => !COMMAND_WORDS.includes(c)), [], "no such command");
});

Deno.test("README.md and docs/**/*.md: every relative link names a file, every #anchor a heading", async () => {
  const pages = ["README.md", ...await _markdownUnder("docs")];
  const broken: string[] = [];
  for (const page of pages) {
    const text = await _read(page);
    for (const target of _links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
      const [path, anchor] = _split(target);
      const file = path ? _resolve(page, path) : page;
      const info = await Deno.stat(new URL(file, _ROOT)).catch(() => null);
      if (!info) {
        broken.push(`${page}: ${target} (no file ${file})`);
        continue;
      }
      if (anchor === undefined || !file.endsWith(".md") || !info.isFile) continue;
      if (!headingSlugs(await _read(file)).has(decodeURIComponent(anchor))) {
        broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
  }
  assertEquals(broken, [], "broken links");
});

/**
 * The widest a Markdown table line may be, in characters. Prose wraps at 100 (`deno fmt`), but a
 * table row cannot wrap, so it gets a fifth more; past that the source no longer fits a laptop's
 * editor or GitHub's code and diff views, and the rendered table squeezes its columns into slivers
 * or scrolls sideways. A wider table wants narrower columns or a list.
 */
const _TABLE_WIDTH = 120;

Deno.test("README.md and docs/**/*.md: no table line is wider than 120 characters", async () => {
  const wide: string[] = [];
  for (const page of ["README.md", ...await _markdownUnder("docs")]) {
    _prose(await _read(page), { keepCode: true }).split("\n").forEach((line, i) => {
      const width = [...line].length;
      if (/^\s*\|/.test(line) && width > _TABLE_WIDTH) wide.push(`${page}:${i + 1} (${width})`);
    });
  }
  assertEquals(wide, [], `table lines wider than ${_TABLE_WIDTH} characters`);
});

Deno.test("headingSlugs() follows GitHub's rules: lower case, punctuation dropped, repeats numbered", () => {
  const slugs = headingSlugs(
    "# Session directory (D1)\n## `GET /v1/runs/{id}` — events\n## Notes\n```sh\n# not a heading\n```\n## Notes\n",
  );
  assertEquals([...slugs], ["session-directory-d1", "get-v1runsid--events", "notes", "notes-1"]);
  assert(!slugs.has("not-a-heading"));
});

/** The anchors GitHub gives the headings of `markdown` (ATX headings outside code fences). */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of _prose(markdown, { keepCode: true }).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count ? `${base}-${count}` : base);
  }
  return slugs;
}

function _isSetting(name: string): boolean {
  if (name in _TABLE) return true;
  // A family's member (`LLM_API_KEY_2`), or a field a family's placeholder stands for
  // (`SESSION_DEFAULT_<FIELD>`'s `CHAT_ID`).
  return Object.entries(_TABLE).some(([family, spec]) => {
    if (!spec.family) return false;
    const fixed = family.slice(0, family.indexOf("<"));
    return name.startsWith(fixed) || `${fixed}${name}` in _TABLE ||
      spec.description.includes(`\`${name}\``);
  });
}

/** The names wrangler.toml binds (`binding = "MEDIA"`, `name = "EMAIL_OUT"`): not settings, yet named in them. */
async function _bindingNames(): Promise<Set<string>> {
  const toml = await _read("wrangler.toml");
  return new Set(
    [...toml.matchAll(/^\s*(?:binding|name)\s*=\s*"([A-Z][A-Z0-9_]*)"/gm)].map((m) => m[1]),
  );
}

/** `markdown` without fenced code blocks (kept as blank lines) and, unless `keepCode`, inline code. */
function _prose(markdown: string, options: { keepCode?: boolean } = {}): string {
  let fence = false;
  const lines = markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      return "";
    }
    return fence ? "" : line;
  });
  const text = lines.join("\n");
  return options.keepCode ? text : text.replace(/`[^`]*`/g, "");
}

/** Link and image targets of `markdown`, outside code. */
function _links(markdown: string): string[] {
  const text = _prose(markdown);
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
}

function _split(target: string): [string, string | undefined] {
  const hash = target.indexOf("#");
  return hash < 0 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}

/** `target` (relative to `page`, both repository-relative) as a repository-relative path. */
function _resolve(page: string, target: string): string {
  const url = new URL(target, new URL(page, "file:///repo/"));
  return decodeURIComponent(url.pathname.slice("/repo/".length));
}

async function _markdownUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(new URL(`${dir}/`, _ROOT))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await _markdownUnder(path));
    else if (entry.name.endsWith(".md")) found.push(path);
  }
  return found.sort();
}

function _read(path: string): Promise<string> {
  return Deno.readTextFile(new URL(path, _ROOT));
}

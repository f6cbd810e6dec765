// README.md's code blocks: each is run (npm commands against package.json, curl against baton in workerd, config parsed) or marked as needing the internet; Deno.
import { assert, assertEquals } from "@std/assert";
import { SETTINGS } from "../lib/deployment/settings.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

const _ROOT = new URL("../", import.meta.url);
const _README = await Deno.readTextFile(new URL("README.md", _ROOT));
const _SCRIPTS: Record<string, string> = JSON.parse(
  await Deno.readTextFile(new URL("package.json", _ROOT)),
).scripts;

/** The README's local origin and key, as `npm start` serves them. */
const _LOCAL_ORIGIN = "http://127.0.0.1:8787";
const _LOCAL_KEY = "baton-local-key";

/** npm's own commands a README may name besides package.json's scripts. */
const _NPM_BUILTINS = new Set(["install", "ci"]);

/**
 * What only the internet or an account can do: the one reason a block may be marked not run. A
 * marked block that matches none of these could run offline, so it must be run instead.
 */
const _NEEDS_NETWORK = [
  /\bwrangler (login|secret|d1|r2)\b/,
  /\bnpm run deploy\b/,
  /\bcloudflared\b/,
  /\/v1\/access\/pairings\/[A-Z0-9]{8}\/approve\b/, // a code only the platform shows
];

/** One fenced block: its info string, its text, its line, and the `not run` reason before it. */
interface _Block {
  lang: string;
  text: string;
  line: number;
  notRun?: string;
}

/** The fenced code blocks of a Markdown text, each with the `<!-- not run: … -->` just before it. */
function _readmeBlocks(markdown: string): _Block[] {
  const lines = markdown.split("\n");
  const blocks: _Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^(\s*)(`{3,}|~{3,})\s*([\w-]*)/);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trim().startsWith(fence)) end++;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === "") before--;
    const mark = before >= 0 ? lines[before].trim().match(/^<!-- not run: (.+) -->$/) : null;
    blocks.push({
      lang,
      text: lines.slice(i + 1, end).map((l) => l.startsWith(indent) ? l.slice(indent.length) : l)
        .join("\n"),
      line: i + 1,
      notRun: mark?.[1].trim(),
    });
    i = end;
  }
  return blocks;
}

/** A shell block's commands: comments dropped, `\` continuations joined, `&&` chains split. */
function _commands(text: string): string[] {
  return text.replace(/\\\n/g, " ").split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter((l) => l !== "")
    .flatMap((l) => l.split("&&").map((c) => c.trim()));
}

/** Why a shell command cannot be checked offline, or null: npm commands must name real scripts. */
function _npmProblem(command: string): string | null {
  const words = command.split(/\s+/);
  if (words[0] !== "npm") return `not an npm or curl command: ${command}`;
  const name = words[1] === "run" ? words[2] : words[1];
  if (words[1] !== "run" && _NPM_BUILTINS.has(name)) return null;
  return name in _SCRIPTS ? null : `npm script "${name}" is not in package.json`;
}

/** Every problem with the README's blocks, as `README.md:<line> …` lines (empty: all accounted for). */
function readmeBlockProblems(markdown: string): string[] {
  const problems: string[] = [];
  for (const b of _readmeBlocks(markdown)) {
    const at = `README.md:${b.line} (${b.lang || "no language"})`;
    if (b.notRun !== undefined) {
      if (!_NEEDS_NETWORK.some((re) => re.test(b.text))) {
        problems.push(`${at} is marked "not run: ${b.notRun}" but could run offline`);
      }
      continue;
    }
    if (b.lang === "sh" || b.lang === "bash" || b.lang === "shell") {
      for (const c of _commands(b.text)) {
        if (c.startsWith("curl ")) continue; // run below against workerd
        const problem = _npmProblem(c);
        if (problem) problems.push(`${at}: ${problem}`);
      }
    } else if (b.lang === "json") {
      try {
        JSON.parse(b.text);
      } catch (e) {
        problems.push(`${at}: not JSON: ${(e as Error).message}`);
      }
    } else if (b.lang === "dotenv") {
      for (const l of b.text.split("\n").filter((l) => l.trim() && !l.startsWith("#"))) {
        const name = l.match(/^([A-Z][A-Z0-9_]*)=\S/)?.[1];
        if (!name) problems.push(`${at}: not NAME=value: ${l}`);
        else if (!(name in SETTINGS)) problems.push(`${at}: ${name} is not a setting`);
      }
    } else {
      problems.push(`${at} is neither run nor marked <!-- not run: reason -->`);
    }
  }
  return problems;
}

/** The README's runnable curl commands, in order. */
function _curls(markdown: string): string[] {
  return _readmeBlocks(markdown)
    .filter((b) => b.notRun === undefined && ["sh", "bash", "shell"].includes(b.lang))
    .flatMap((b) => _commands(b.text))
    .filter((c) => c.startsWith("curl "));
}

Deno.test("readmeBlockProblems() accepts every code block of README.md", () => {
  assertEquals(readmeBlockProblems(_README), []);
});

Deno.test("readmeBlockProblems() refuses an unmarked block, a wrong mark, a missing script and a bad setting", () => {
  const md = [
    "```ts",
    "const x = 1;",
    "```",
    "<!-- not run: lazy -->",
    "```sh",
    "npm test",
    "```",
    "```sh",
    "npm run no-such-script",
    "```",
    "```dotenv",
    "NOT_A_SETTING=1",
    "```",
  ].join("\n");
  const problems = readmeBlockProblems(md);
  assertEquals(problems.length, 4, problems.join("\n"));
  assert(problems[0].includes("neither run nor marked"));
  assert(problems[1].includes("could run offline"));
  assert(problems[2].includes("no-such-script"));
  assert(problems[3].includes("NOT_A_SETTING"));
});

// The README's own promise: the local key and the built-in echo model (no LLM_BASE_URL).
const baton = sharedBaton({
  vars: { LLM_BASE_URL: undefined, LLM_API_KEY: undefined, GATEWAY_API_KEY: _LOCAL_KEY },
  directory: "migrated",
});

baton.test("README.md's curl commands answer 2xx JSON from baton with the echo model", async (w) => {
  const curls = _curls(_README);
  assert(curls.length > 0, "the README has a curl command to run");
  const origin = w.url.replace(/\/$/, "");
  for (const c of curls) {
    assert(c.includes(_LOCAL_ORIGIN), `a README curl calls ${_LOCAL_ORIGIN}: ${c}`);
    // --fail-with-body: a 4xx or 5xx fails the command, so a wrong route or key cannot pass.
    const script = c.replaceAll(_LOCAL_ORIGIN, origin)
      .replace(/^curl /, "curl --fail-with-body --max-time 60 ");
    const out = await new Deno.Command("bash", { args: ["-c", script], stdout: "piped" }).output();
    const body = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, `${c}\n→ exit ${out.code}: ${body}`);
    JSON.parse(body);
  }
});

baton.done();

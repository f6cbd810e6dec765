// What each platform's setup step is handed: the settings, the deployment's webhook URL, and a printer and HTTP caller that never show a secret; Deno.
import { type SettingName, SETTINGS } from "../../lib/deployment/settings.ts";
import { redact } from "../../lib/runtime/http_out.ts";

/** Where the CLI reads from and prints to; tests pass their own. */
export interface SetupIo {
  /** The settings: the environment over `.dev.vars` (see `readDevVars`). */
  env: Record<string, string | undefined>;
  /** One line of output; every line has passed through the secret filter first. */
  print(line: string): void;
}

/** An HTTP answer as a setup step reads it: the status and the body, JSON when it parses. */
export interface SetupAnswer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A setup step's view of the deployment and its output; `failed` once any `problem` is printed. */
export interface SetupContext {
  /** The route's name, e.g. "telegram". */
  platform: string;
  /** Where the platform must deliver: the deployment's URL + `/webhooks/<platform>`. */
  webhookUrl: string;
  /** The deployment's URL, without a trailing slash. */
  base: string;
  /** A setting's value; "" counts as unset. */
  setting(name: SettingName | string): string | undefined;
  /** The values of `names`, in order, or a problem naming the missing ones (then null). */
  need(...names: SettingName[]): string[] | null;
  /** A line as it is (a manifest, a step), secrets filtered out. */
  print(line: string): void;
  /** The value of the CLI's `--name value` option (`--number`, `--app-id`). */
  option(name: string): string | undefined;
  /** A step that worked. */
  ok(line: string): void;
  /** Worth knowing, not a failure. */
  note(line: string): void;
  /** A failure: the run exits 1. */
  problem(line: string): void;
  /** Whether any problem was printed. */
  readonly failed: boolean;
  /** `fetch`, its failures turned into a problem (then null) and its body read. */
  call(url: string, init: RequestInit, what: string): Promise<SetupAnswer | null>;
}

/**
 * The values never to print: every setting the table marks secret, whole, and the half of a
 * Telegram bot token after its colon (the token travels in the Bot API's URL).
 */
function _secrets(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const setting = (SETTINGS as Record<string, { secret?: boolean }>)[name];
    if (!value || !setting?.secret) continue;
    out.push(value);
    if (name === "TELEGRAM_BOT_TOKEN" && value.includes(":")) {
      out.push(value.slice(value.indexOf(":") + 1));
    }
  }
  return out;
}

/** The context of one run for `platform`, its deployment at `base` (already checked). */
export function setupContext(
  platform: string,
  base: string,
  io: SetupIo,
  options: Record<string, string> = {},
): SetupContext {
  const secrets = _secrets(io.env);
  const say = (mark: string, line: string) => io.print(redact(`${mark} ${line}`, secrets));
  let failed = false;
  const ctx: SetupContext = {
    platform,
    base,
    webhookUrl: `${base}/webhooks/${platform}`,
    setting: (name) => io.env[name] || undefined,
    need(...names) {
      const missing = names.filter((n) => !io.env[n]);
      if (missing.length) {
        ctx.problem(
          `set ${missing.join(", ")} (in the environment or .dev.vars, the same values as the ` +
            `deployment's: wrangler secret put NAME)`,
        );
        return null;
      }
      return names.map((n) => io.env[n] as string);
    },
    print: (line) => io.print(redact(line, secrets)),
    option: (name) => options[name] || undefined,
    ok: (line) => say("✓", line),
    note: (line) => say("!", line),
    problem(line) {
      failed = true;
      say("✗", line);
    },
    get failed() {
      return failed;
    },
    async call(url, init, what) {
      let res: Response;
      try {
        res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
      } catch (e) {
        ctx.problem(`could not reach ${what}: ${e instanceof Error ? e.message : String(e)}`);
        return null;
      }
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch { /* not JSON: the text as is */ }
      return { status: res.status, body };
    },
  };
  return ctx;
}

/**
 * The deployment's URL from `--url` or `PUBLIC_URL`: an http(s) origin with an optional path
 * prefix, trailing slashes trimmed; an error text when it is missing or not such a URL.
 */
export function deploymentBase(given: string | undefined): string | { error: string } {
  if (!given) {
    return {
      error: "no deployment URL: pass --url https://… or set PUBLIC_URL (environment or .dev.vars)",
    };
  }
  const trimmed = given.trim().replace(/\/+$/, "");
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/i.test(trimmed)) {
    return { error: `the deployment URL ${trimmed} is not an http(s) URL without query` };
  }
  return trimmed;
}

/**
 * The `NAME=value` lines of a `.dev.vars` file (as wrangler reads it: `#` comments, optional
 * `export`, values in single or double quotes); an absent file is empty.
 */
export async function readDevVars(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return {};
    throw e;
  }
  return parseDevVars(text);
}

/** `readDevVars`' parser (see there). */
export function parseDevVars(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2];
    const quoted = /^(["'])(.*)\1$/.exec(value);
    if (quoted) {
      value = quoted[1] === '"' ? quoted[2].replace(/\\n/g, "\n").replace(/\\"/g, '"') : quoted[2];
    } else {
      value = value.replace(/\s+#.*$/, "").trim();
    }
    out[m[1]] = value;
  }
  return out;
}

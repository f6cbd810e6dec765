// `npm run setup -- <platform> [--check] [--url URL]`: registers baton's webhook with a chat platform, or verifies it end to end; Deno.
import {
  deploymentBase,
  readDevVars,
  type SetupContext,
  setupContext,
  type SetupIo,
} from "./setup/_context.ts";
import {
  discordSteps,
  githubCheck,
  githubSteps,
  googleChatSteps,
  slackCheck,
  slackSteps,
  teamsSteps,
} from "./setup/console_steps.ts";
import { checkLine, setupLine } from "./setup/line.ts";
import { probeRoute } from "./setup/_probe.ts";
import { checkTelegram, setupTelegram } from "./setup/telegram.ts";
import { checkTwilio, setupTwilio } from "./setup/twilio.ts";
import { checkWhatsapp, setupWhatsapp } from "./setup/whatsapp.ts";

/** One platform's setup: `set` registers the webhook (or prints the console steps), `check` verifies. */
interface PlatformSetup {
  set(ctx: SetupContext): Promise<void>;
  check(ctx: SetupContext): Promise<void>;
}

/** Every platform the CLI knows, by the name of its route (`/webhooks/<name>`). */
const _PLATFORMS: Record<string, PlatformSetup> = {
  telegram: { set: setupTelegram, check: checkTelegram },
  line: { set: setupLine, check: checkLine },
  twilio: { set: setupTwilio, check: checkTwilio },
  whatsapp: { set: setupWhatsapp, check: checkWhatsapp },
  slack: { set: slackSteps, check: slackCheck },
  github: { set: githubSteps, check: githubCheck },
  // Only these platforms can sign their deliveries: the check stops at the route's refusal.
  discord: { set: discordSteps, check: probeRoute },
  teams: { set: teamsSteps, check: probeRoute },
  "google-chat": { set: googleChatSteps, check: probeRoute },
};

/** The options that take a value: the deployment's URL, Twilio's number, the Meta app's id. */
const _VALUED = new Set(["url", "number", "app-id"]);

const _USAGE = "usage: npm run setup -- <platform> [--check] [--url https://your.deployment] " +
  "[--number +1… (twilio)] [--app-id ID (whatsapp)]\n" +
  `platforms: ${Object.keys(_PLATFORMS).join(", ")}`;

/**
 * Runs the CLI on `args` (without the program): 0 when everything worked, 1 when a step failed
 * (each failure printed with what to do), 2 for a usage error. The deployment's URL is `--url`,
 * else the `PUBLIC_URL` setting; secrets are read from `io.env` and never printed.
 */
export async function runSetup(args: string[], io: SetupIo): Promise<number> {
  let check = false;
  const options: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const valued = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (arg === "--check") check = true;
    else if (arg === "--help" || arg === "-h") {
      io.print(_USAGE);
      return 0;
    } else if (valued && _VALUED.has(valued[1])) {
      options[valued[1]] = valued[2] ?? args[++i] ?? "";
    } else if (arg.startsWith("-")) {
      io.print(`unknown option ${arg}\n${_USAGE}`);
      return 2;
    } else rest.push(arg);
  }
  const setup = rest.length === 1 ? _PLATFORMS[rest[0]] : undefined;
  if (!setup) {
    io.print(rest.length === 1 ? `unknown platform ${rest[0]}\n${_USAGE}` : _USAGE);
    return 2;
  }
  const base = deploymentBase(options.url ?? io.env.PUBLIC_URL);
  if (typeof base !== "string") {
    io.print(`✗ ${base.error}`);
    return 2;
  }
  const ctx = setupContext(rest[0], base, io, options);
  await (check ? setup.check(ctx) : setup.set(ctx));
  return ctx.failed ? 1 : 0;
}

if (import.meta.main) {
  // The environment wins over .dev.vars: a value given for this run beats the file's.
  const file = await readDevVars(".dev.vars");
  const env: Record<string, string | undefined> = { ...file, ...Deno.env.toObject() };
  Deno.exit(await runSetup(Deno.args, { env, print: (line) => console.log(line) }));
}

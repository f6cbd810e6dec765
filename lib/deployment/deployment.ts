// One deployment as its code defines it (tools, prompts, per-platform and per-channel sets, setting defaults, pdf.js), resolved per turn; its config read once per env; runtime-neutral.
import type { Tool, TurnHooks } from "../agent/mod.ts";
import type { PdfjsLoader } from "../media/mod.ts";
import type { SessionContext } from "../runtime/mod.ts";
import type { SettingsEnv } from "./settings.ts";
import { batonToolNames } from "./agent.ts";
import { type BatonConfig, readConfig } from "./config.ts";

/** The platforms a deployment may configure (a turn's `platform` context field). */
export type PlatformName =
  | "telegram"
  | "slack"
  | "discord"
  | "github"
  | "whatsapp"
  | "line"
  | "twilio"
  | "teams"
  | "google-chat"
  | "generic"
  | "api";

/** What a system prompt function gets: the turn's context, its channel's options and the time. */
export type PromptContext = SessionContext & {
  /** The turn's start as an ISO 8601 time (UTC). */
  now: string;
  /** The options of the turn's channel (`platforms[platform].channels[chat_id]`), if it has any. */
  channel?: ChannelOptions;
  /** `SYSTEM_PROMPT` as configured (env, else `settings`), "" when unset: a function may build on it. */
  system_prompt: string;
};

/**
 * A system prompt: a text, or a function of the turn's context evaluated as each turn starts, in
 * its session, under the turn's context (`currentContext()` works inside it). A function that
 * throws fails the turn like a model error.
 */
export type SystemPrompt = string | ((context: PromptContext) => string | Promise<string>);

/** A channel's own prompt and tools (a Slack channel id, a Telegram chat id: the turn's `chat_id`). */
export interface ChannelOptions {
  /** Replaces the platform's (and the deployment's) prompt in this channel. */
  systemPrompt?: SystemPrompt;
  /** Added to the deployment's and the platform's tools in this channel (never replacing them). */
  tools?: Tool[];
  /** This channel's model (the deployment's choice: it need not be on `MODELS`; a user's `/model` wins). */
  model?: string;
  /** Free values of the deployment's own for this channel, read by a prompt function (`ctx.channel`). */
  settings?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * A platform's prompt, tools and channels. The adapter's own configuration (credentials, API
 * roots) stays in env vars and secrets for now: a typed object per adapter, falling back to those
 * vars, would be added here as more fields.
 */
export interface PlatformOptions {
  /** Replaces the deployment's prompt on this platform (a channel's replaces this one). */
  systemPrompt?: SystemPrompt;
  /** Added to the deployment's tools on this platform. */
  tools?: Tool[];
  /** This platform's model (a channel's wins; a user's `/model` wins over both). */
  model?: string;
  /** Per channel (keyed by the turn's `chat_id`). */
  channels?: Readonly<Record<string, ChannelOptions>>;
}

/** A setting value given in code; stored as the env var's text (`true` → "true"). */
export type SettingValue = string | number | boolean;

/** Setting defaults in code, by their names in the settings table (lib/deployment/settings.ts). */
export type BatonSettings = { readonly [Name in keyof SettingsEnv]?: SettingValue };

/** What a deployment's code defines: the options of `defineBaton` (functions/define_baton.ts) but the hooks. */
export interface DeploymentOptions {
  /** The deployment's own tools (`defineTool`), added to baton's built-ins on every platform. */
  tools?: Tool[];
  /** The prompt of every turn but where a platform or channel has its own; unset: `SYSTEM_PROMPT`. */
  systemPrompt?: SystemPrompt;
  /** Per-platform (and per-channel) prompts and tools. */
  platforms?: { readonly [P in PlatformName]?: PlatformOptions };
  /**
   * Defaults for the settings baton reads from env vars (names as in docs/reference/settings.md,
   * e.g. `{ MAX_TURN_STEPS: 12, STREAM_REPLIES: false }`), typed by the settings table: a name it
   * does not hold is a type error. An env var or secret that is set wins: code sets the defaults,
   * each environment overrides them.
   */
  settings?: BatonSettings;
  /**
   * The model: defaults for `LLM_MODEL` (`name`), `MODEL_FALLBACKS` (`fallbacks`) and `MODELS`
   * (`choices`), merged like `settings` (an env var that is set wins; `settings` wins over these).
   */
  model?: ModelOptions;
  /** The deployment's turn hooks (lib/agent/turn_hooks.ts). */
  hooks?: TurnHooks;
  /**
   * How this deployment loads pdf.js (`BatonOptions.pdf`, functions/define_baton.ts); absent:
   * PDFs are refused. Its config's `media.pdf`: another deployment of the bundle does not see it.
   */
  pdf?: PdfjsLoader;
}

/** A deployment's model names, as defaults of their settings. */
export interface ModelOptions {
  /** `LLM_MODEL`: the model of every turn. */
  name?: string;
  /** `MODEL_FALLBACKS`: tried in order when the one before fails with 429, 5xx or a timeout. */
  fallbacks?: readonly string[];
  /** `MODELS`: the names a user may pick (`/model`, the APIs' `model` field). */
  choices?: readonly string[];
}

/** A turn's system prompt and the tools it adds to the deployment's. */
export interface TurnSetup {
  system: string;
  tools: Tool[];
  /** The turn's channel's (else platform's) model, when the deployment names one. */
  model?: string;
}

/** A deployment resolved once: what its sessions and routes read. */
export interface Deployment {
  /** The deployment's own tools (offered on every platform, and to delegate_task's sub-agent). */
  readonly tools: Tool[];
  /** Every tool name baton runs itself in any turn: a client's tool may not take one. */
  readonly toolNames: ReadonlySet<string>;
  /** The deployment's turn hooks, if any. */
  readonly hooks?: TurnHooks;
  /**
   * The Worker's env with the code's setting defaults under it: the same object when there are
   * none, else one copy per env object (a copy given again is returned as it is).
   */
  env<E extends object>(env: E): E;
  /**
   * The config of `env` (the Worker's, as it came or as `env()` gave it): its settings with the
   * code's defaults under them (`readConfig`), and the code's own (`pdf`). Read on an env
   * object's first request, then kept: workerd hands every request of an isolate the same env,
   * and its variables change only with a deploy (a new isolate, a new env), so a warm request
   * reads none of its settings again. Kept per deployment, so two deployments in one bundle
   * never share one; weakly keyed, so another env (a test's own bindings) is read anew. The
   * config is never written to after it is read.
   */
  config(env: object): BatonConfig;
  /**
   * The system prompt and extra tools of the turn whose context is bound now; `systemPrompt` is
   * the configured `SYSTEM_PROMPT`.
   */
  turn(context: SessionContext, systemPrompt: string): Promise<TurnSetup>;
}

/**
 * Resolves `options` into a deployment. Throws (at definition, before any request) when a tool
 * name appears twice among the tools one turn could get: such a tool would be silently dropped.
 */
export function deploymentOf(options: DeploymentOptions = {}): Deployment {
  const tools = [...options.tools ?? []];
  const platforms = options.platforms ?? {};
  const all = [...tools];
  for (const [platform, config] of Object.entries(platforms) as [string, PlatformOptions][]) {
    _checkUnique([...tools, ...config.tools ?? []], platform);
    all.push(...config.tools ?? []);
    for (const [chat, channel] of Object.entries(config.channels ?? {})) {
      _checkUnique(
        [...tools, ...config.tools ?? [], ...channel.tools ?? []],
        `${platform} ${chat}`,
      );
      all.push(...channel.tools ?? []);
    }
  }
  _checkUnique(tools, "tools");
  const { name, fallbacks, choices } = options.model ?? {};
  const defaults = _settingTexts({
    ...(name ? { LLM_MODEL: name } : {}),
    ...(fallbacks?.length ? { MODEL_FALLBACKS: fallbacks.join(",") } : {}),
    ...(choices?.length ? { MODELS: choices.join(",") } : {}),
    ...options.settings,
  });
  const code = options.pdf ? { pdf: options.pdf } : {};
  // One copy per env object, so the config kept per env is found again on the next request.
  const copies = new WeakMap<object, object>();
  const made = new WeakSet<object>();
  const envOf = <E extends object>(env: E): E => {
    if (!defaults || made.has(env)) return env;
    let copy = copies.get(env);
    if (!copy) {
      copies.set(env, copy = _withDefaults(env, defaults));
      made.add(copy);
    }
    return copy as E;
  };
  const configs = new WeakMap<object, BatonConfig>();
  return {
    tools,
    toolNames: batonToolNames(all),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    env: envOf,
    config(env) {
      const own = envOf(env);
      let config = configs.get(own);
      if (!config) configs.set(own, config = readConfig(own, code));
      return config;
    },
    async turn(context, systemPrompt) {
      const platform = (platforms as Record<string, PlatformOptions | undefined>)[context.platform];
      const channel = platform?.channels?.[context.chat_id];
      const prompt = channel?.systemPrompt ?? platform?.systemPrompt ?? options.systemPrompt;
      const system = typeof prompt === "function"
        ? await prompt({
          ...context,
          now: new Date().toISOString(),
          ...(channel ? { channel } : {}),
          system_prompt: systemPrompt,
        })
        : prompt ?? systemPrompt;
      const model = channel?.model ?? platform?.model;
      return {
        system: String(system),
        tools: [...platform?.tools ?? [], ...channel?.tools ?? []],
        ...(model ? { model } : {}),
      };
    },
  };
}

/** Throws when a name repeats among `tools` (`where` names the set in the message). */
function _checkUnique(tools: Tool[], where: string): void {
  const seen = new Set<string>();
  for (const { name } of tools) {
    if (seen.has(name)) throw new TypeError(`defineBaton: tool ${name} given twice (${where})`);
    seen.add(name);
  }
}

/** The settings as env var texts; null when there are none (the env is then used as is). */
function _settingTexts(
  settings: Partial<Record<string, SettingValue>>,
): Record<string, string> | null {
  const texts: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings)) {
    if (value !== undefined) texts[name] = String(value);
  }
  return Object.keys(texts).length ? texts : null;
}

/**
 * `env` with `defaults` for the names it leaves unset (undefined or ""). A copy: the bindings
 * (Durable Object namespaces, D1) are carried over as they are.
 */
function _withDefaults<E extends object>(env: E, defaults: Record<string, string>): E {
  const merged: Record<string, unknown> = { ...env as Record<string, unknown> };
  for (const [name, value] of Object.entries(defaults)) {
    if (merged[name] === undefined || merged[name] === "") merged[name] = value;
  }
  return merged as E;
}

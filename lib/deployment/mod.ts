// One deployment: its settings read from the Worker's env, and the turn executor (model, built-in tools) they assemble; runtime-neutral.
export { batonToolNames, createTurnExecutor } from "./agent.ts";
export { adapterMediaFetch, withChatMedia } from "./media_turns.ts";
export type { ChatMediaOptions } from "./media_turns.ts";
export { createSummarizer } from "./summarizer.ts";
export { deploymentOf } from "./deployment.ts";
export type {
  BatonSettings,
  ChannelOptions,
  Deployment,
  DeploymentOptions,
  ModelOptions,
  PlatformName,
  PlatformOptions,
  PromptContext,
  SettingValue,
  SystemPrompt,
} from "./deployment.ts";
export { readConfig } from "./config.ts";
export type { BatonConfig } from "./config.ts";
export { SETTING_GROUPS, SETTINGS } from "./settings.ts";
export type { Setting, SettingGroup, SettingName, SettingsEnv } from "./settings.ts";

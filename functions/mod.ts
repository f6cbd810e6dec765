// The package's root face (`baton`): defineBaton, defineTool and the types a deployment writes against; Workers (cloudflare:workers).
export { type Baton, type BatonOptions, defineBaton } from "./define_baton.ts";
export type { Env } from "./env.ts";
export { defineTool } from "../lib/public/tools.ts";
export type { Tool, ToolApproval, ToolRunOptions } from "../lib/public/tools.ts";
export { currentContext } from "../lib/public/context.ts";
export type { ContextFields, PromptContext, SessionContext } from "../lib/public/context.ts";
export type {
  BatonSettings,
  ChannelOptions,
  ModelOptions,
  PlatformName,
  PlatformOptions,
  SettingValue,
  SystemPrompt,
} from "../lib/deployment/mod.ts";
export type {
  MessageReceivedEvent,
  ToolCallEvent,
  TurnEndEvent,
  TurnHooks,
  TurnStartEvent,
} from "../lib/agent/mod.ts";

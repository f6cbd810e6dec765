// The agent turn: chat models, tools, the tool-calling loop and the delegate_task sub-agent; any runtime with node:async_hooks.
export { echoModel, messageText, ModelError, openAIChatModel } from "./chat_model.ts";
export type {
  ChatMessage,
  ChatModel,
  FallbackAttempt,
  ModelParams,
  ModelReply,
  ModelRequest,
  ToolCall,
} from "./chat_model.ts";
export { createDelegateTaskTool } from "./delegate_task.ts";
export { fallsBack, modelFallbacks } from "./model_fallbacks.ts";
export { allowedModel, modelChoiceOn, turnModelName } from "./turn_model.ts";
export type { ModelChoice, ModelMenu } from "./turn_model.ts";
export { runTurn } from "./run_turn.ts";
export type { ModelEvent, PendingCall, ToolEvent, TurnResume } from "./run_turn.ts";
export { callHook, DEFAULT_HOOK_TIMEOUT_MS, dropsMessage, hookContext } from "./turn_hooks.ts";
export type {
  HookContext,
  HookOptions,
  MessageReceivedEvent,
  MessageVerdict,
  ToolCallEvent,
  ToolCallVerdict,
  TurnEndEvent,
  TurnHooks,
  TurnStartEvent,
} from "./turn_hooks.ts";
export { defineTool, sessionInfoTool, toolAsks, ToolRegistry } from "./tools.ts";
export {
  FILES_ATTACHED_NOTE,
  messageFiles,
  toolResultFiles,
  turnFiles,
  withoutToolFiles,
} from "./tool_files.ts";
export type { AttachedFile, ToolFile, ToolFileStore } from "./tool_files.ts";
export type { Tool } from "./tools.ts";

// The agent turn: chat models, tools, the tool-calling loop and the delegate_task sub-agent; any runtime with node:async_hooks.
export { echoModel, messageText, ModelError, openAIChatModel } from "./chat_model.ts";
export type {
  ChatMessage,
  ChatModel,
  ModelParams,
  ModelReply,
  ModelRequest,
  ToolCall,
} from "./chat_model.ts";
export { createDelegateTaskTool } from "./delegate_task.ts";
export { runTurn } from "./run_turn.ts";
export type { ModelEvent, PendingCall, ToolEvent, TurnResume } from "./run_turn.ts";
export { defineTool, sessionInfoTool, toolAsks, ToolRegistry } from "./tools.ts";
export type { Tool } from "./tools.ts";

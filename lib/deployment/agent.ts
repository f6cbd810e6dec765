// Builds the turn executor a session runs: model from config, tools; runtime-neutral.
import {
  type ChatModel,
  createDelegateTaskTool,
  echoModel,
  type ModelEvent,
  openAIChatModel,
  runTurn,
  sessionInfoTool,
  type Tool,
  toolAsks,
  type ToolEvent,
  ToolRegistry,
} from "../agent/mod.ts";
import type { BatonConfig } from "./config.ts";
import { SCHEDULE_TOOL_NAMES, scheduleTools } from "./schedule_tools.ts";
import type { TurnExecutor } from "../session/mod.ts";

/** The configured model: the OpenAI-compatible provider, or echo when LLM_BASE_URL is unset. */
export function modelFromConfig(config: BatonConfig): ChatModel {
  if (!config.llmBaseUrl) return echoModel();
  return openAIChatModel({
    baseURL: config.llmBaseUrl,
    apiKey: config.llmApiKey,
    model: config.llmModel,
    maxRetries: config.llmMaxRetries,
    timeoutMs: config.llmTimeoutMs,
  });
}

/** The names of the tools baton runs itself (built-ins and the deployment's): a client's may not clash. */
export function batonToolNames(extraTools: Tool[]): Set<string> {
  return new Set([
    "session_info",
    "delegate_task",
    ...SCHEDULE_TOOL_NAMES,
    ...extraTools.map((tool) => tool.name),
  ]);
}

/** Tools listed anew for each turn (the MCP servers' tools: lib/mcp/mcp_tools.ts `McpToolbox`). */
export interface TurnTools {
  /** The tools to offer this turn; rejects only when `signal` aborts. */
  tools(signal: AbortSignal): Promise<Tool[]>;
}

/**
 * The executor for a session's turns: runs the agent loop with the built-in and deployment tools,
 * and those `remote` offers for the turn. The turn's context is bound already, once, by the
 * session that runs it (lib/session/turn_trace.ts `traced`), with this bundle's async delivery
 * unsupported; its tools read it in their `run` options.
 */
export function createTurnExecutor(
  config: BatonConfig,
  extraTools: Tool[],
  remote?: TurnTools,
): TurnExecutor {
  const model = modelFromConfig(config);
  const childTools = [sessionInfoTool, ...extraTools];
  const tools = new ToolRegistry([
    ...childTools,
    ...scheduleTools({ approveRecurring: config.approveRecurringJobs }),
    createDelegateTaskTool({
      model,
      tools: new ToolRegistry(childTools),
      system: config.systemPrompt,
      maxSteps: config.maxTurnSteps,
      asks: (tool, args) => toolAsks(tool, args, config.approvalTools),
    }),
  ]);
  return async (message, history, signal, progress, approvals) =>
    await runTurn({
      asks: (tool, args) =>
        !approvals?.granted.has(tool.name) && toolAsks(tool, args, config.approvalTools),
      ...(approvals?.resume ? { resume: approvals.resume } : {}),
      model,
      tools: remote ? tools.with(await remote.tools(signal)) : tools,
      system: [config.systemPrompt, message.system ?? ""],
      history,
      ...(message.toolResults?.length
        ? { toolResults: message.toolResults }
        : { input: message.text }),
      ...(message.clientTools?.length ? { clientTools: message.clientTools } : {}),
      ...(message.params ? { params: message.params } : {}),
      maxSteps: config.maxTurnSteps,
      signal,
      progress,
      // The model streams only where the text is wanted as it grows (events, a chat's preview).
      ...(progress.deltas || progress.preview
        ? {
          onDelta: (delta: string) => {
            if (progress.deltas) progress.emit?.("message.delta", { delta });
            progress.preview?.(delta);
          },
        }
        : {}),
      ...(progress.emit
        ? {
          onTool: ({ type, ...data }: ToolEvent) => progress.emit!(type, data),
          onModel: ({ type, ...data }: ModelEvent) => progress.emit!(type, data),
        }
        : {}),
    });
}

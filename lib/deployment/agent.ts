// Builds the turn executor a session runs: model from config, tools; runtime-neutral.
import {
  type ChatModel,
  createDelegateTaskTool,
  echoModel,
  type ModelEvent,
  modelFallbacks,
  openAIChatModel,
  runTurn,
  sessionInfoTool,
  type Tool,
  toolAsks,
  type ToolEvent,
  ToolRegistry,
  turnModelName,
} from "../agent/mod.ts";
import type { HookOptions } from "../agent/turn_hooks.ts";
import type { BatonConfig } from "./config.ts";
import { SCHEDULE_TOOL_NAMES, scheduleTools } from "./schedule_tools.ts";
import type { TurnExecutor } from "../session/mod.ts";
import { currentContext, type SessionContext } from "../runtime/mod.ts";
import {
  describeMedia,
  ImageCache,
  imageDescriber,
  mediaModelView,
  type MediaStore,
  outFileStore,
} from "../media/mod.ts";
import { type MemoryStore, turnMemory } from "./memory_tools.ts";

/**
 * The configured model: the OpenAI-compatible provider, followed by `MODEL_FALLBACKS` (each with
 * `LLM_MAX_RETRIES` and `LLM_TIMEOUT_MS` of its own; lib/agent/model_fallbacks.ts), or echo when
 * LLM_BASE_URL is unset.
 */
export function modelFromConfig(config: BatonConfig): ChatModel {
  if (!config.llmBaseUrl) return echoModel();
  const limits = { maxRetries: config.llmMaxRetries, timeoutMs: config.llmTimeoutMs };
  return modelFallbacks([
    openAIChatModel({
      baseURL: config.llmBaseUrl,
      apiKey: config.llmApiKey,
      model: config.llmModel,
      ...limits,
    }),
    ...config.modelFallbacks.map((fallback) => openAIChatModel({ ...fallback, ...limits })),
  ]);
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
 * A turn's own system prompt and the tools it adds, from its bound context and the configured
 * `SYSTEM_PROMPT` (lib/deployment/deployment.ts `Deployment.turn`).
 */
export type TurnSetupOf = (
  context: SessionContext,
  systemPrompt: string,
) => Promise<{ system: string; tools: Tool[] }>;

/**
 * The executor for a session's turns: runs the agent loop with the built-in and deployment tools,
 * those `turnSetup` adds for the turn's platform and channel (with its system prompt, else
 * `SYSTEM_PROMPT`), and those `remote` offers for the turn. The turn's context is bound already, once, by the
 * session that runs it (lib/session/turn_trace.ts `traced`), with this bundle's async delivery
 * unsupported; its tools read it in their `run` options. `hooks.toolCall` is asked before each
 * baton tool call runs (`HOOK_TIMEOUT_MS`: `hooks.hookTimeoutMs`). `media` is the `MEDIA` store:
 * a message's images are kept with it as references and read from there inside the turn, the
 * newest `MEDIA_IMAGES_IN_CONTEXT` sent as image parts (lib/media/ `mediaModelView`), each read
 * and encoded once per `images` (by default one per executor: the session object's, whose store
 * is wrapped by `evictingMediaStore` so a deleted image leaves it).
 * `memory` is where users' memories live: with `MEMORY=on` a turn reads its user's (one read of
 * their record) into a system section and gets `remember` and `recall` (./memory_tools.ts).
 */
export function createTurnExecutor(
  config: BatonConfig,
  extraTools: Tool[],
  remote?: TurnTools,
  turnSetup?: TurnSetupOf,
  hooks: HookOptions = {},
  media?: MediaStore,
  memory?: MemoryStore,
  images: ImageCache = new ImageCache(),
): TurnExecutor {
  const model = modelFromConfig(config);
  const schedule = scheduleTools({ approveRecurring: config.approveRecurringJobs });
  const asks = (tool: Tool, args: Record<string, unknown>) =>
    toolAsks(tool, args, config.approvalTools);
  /**
   * The turn's baton tools: the built-ins, the deployment's and its platform's or channel's, and a
   * `delegate_task` whose sub-agent works as this turn does — the same prompt, tools (but
   * delegation and scheduling) and model.
   */
  const turnTools = (setup: { system: string; tools: Tool[] }, modelName: string) => {
    const childTools = [sessionInfoTool, ...extraTools, ...setup.tools];
    const delegate = createDelegateTaskTool({
      model,
      tools: new ToolRegistry(childTools),
      system: setup.system,
      modelName,
      hooks,
      maxSteps: config.maxTurnSteps,
      asks,
    });
    return new ToolRegistry([...childTools, ...schedule, delegate]);
  };
  return async (message, history, signal, progress, approvals) => {
    // The user's memory (MEMORY=on): its read starts first, so it runs while the turn is set up.
    const memo = memory && config.memory.on
      ? turnMemory(memory, currentContext(), message.group === true)
      : null;
    // Evaluated here, in the session under the turn's frame: a prompt function sees its context.
    const setup: { system: string; tools: Tool[]; model?: string } = turnSetup
      ? await turnSetup(currentContext(), config.systemPrompt)
      : { system: config.systemPrompt, tools: [] };
    // The session's `/model` or the request's `model` when MODELS allows it, else the channel's
    // or platform's model the deployment names (turn_model.ts).
    const modelName = turnModelName({ chosen: message.model, channel: setup.model }, {
      allowed: config.models,
      default: config.llmModel,
    });
    const tools = turnTools(setup, modelName);
    const remoteTools = [...memo?.tools ?? [], ...remote ? await remote.tools(signal) : []];
    const remembered = memo ? await memo.section : "";
    // The message's voice notes and documents made text once, here: the turn keeps its media so
    // described (lib/media/describe_media.ts), and no later turn transcribes them again.
    const inputMedia = message.media?.length && !message.toolResults?.length && !approvals?.resume
      ? await describeMedia(message.media, {
        settings: config.media,
        signal,
        ...(media ? { store: media } : {}),
        // VISION=describe: a text-only model reads each image as VISION_MODEL's words for it.
        describeImage: config.media.vision === "describe"
          ? imageDescriber(model, config.media.visionModel || modelName)
          : null,
      })
      : [];
    return await runTurn({
      asks: (tool, args) => !approvals?.granted.has(tool.name) && asks(tool, args),
      ...(approvals?.resume ? { resume: approvals.resume } : {}),
      model,
      modelName,
      tools: remoteTools.length ? tools.with(remoteTools) : tools,
      system: [setup.system, remembered, message.system ?? ""],
      history,
      ...(message.toolResults?.length
        ? { toolResults: message.toolResults }
        : { input: message.text, ...(inputMedia.length ? { inputMedia } : {}) }),
      // One view per turn: its model calls share the image reads; its turns share `images`.
      view: mediaModelView({
        settings: config.media,
        signal,
        cache: images,
        ...(media ? { store: media } : {}),
      }),
      ...(message.clientTools?.length ? { clientTools: message.clientTools } : {}),
      ...(message.params ? { params: message.params } : {}),
      maxSteps: config.maxTurnSteps,
      // TOOL_RESULT_MAX_CHARS: a huge tool result is cut before the model and the transcript see it.
      toolResultMaxChars: config.toolResultMaxChars,
      // Files a tool returns go to MEDIA and out with the reply (lib/media/out_files.ts).
      ...(media
        ? {
          toolFiles: outFileStore({
            store: media,
            scope: currentContext().session_key,
            maxBytes: config.media.maxBytes,
          }),
        }
        : {}),
      // TURN_MAX_TOKENS: no model call past the turn's ceiling (lib/agent/run_turn.ts).
      ...(config.spend.turnMaxTokens !== null ? { maxTokens: config.spend.turnMaxTokens } : {}),
      signal,
      progress,
      // Messages steered into the turn (`/steer`, BUSY_INPUT_MODE=steer), read before each model call.
      ...(progress.steers ? { steers: progress.steers } : {}),
      // The deployment's toolCall hook, asked before each baton tool call (turn_hooks.ts).
      ...hooks,
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
  };
}

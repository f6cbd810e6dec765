// Built-in tool delegate_task: runs a sub-agent inline, never promising background delivery; runtime-neutral.
import type { ChatModel } from "./chat_model.ts";
import { runTurn } from "./run_turn.ts";
import type { HookOptions } from "./turn_hooks.ts";
import { defineTool, type Tool, type ToolRegistry } from "./tools.ts";

const _NAME = "delegate_task";

const _BACKGROUND_NOTE =
  "Background execution is unavailable on this channel (nothing can be delivered after this turn ends); the task ran synchronously and its result is below.";

interface _Args {
  goal: string;
  context?: string;
  background?: boolean;
}

interface _TaskResult {
  task_index: number;
  status: "completed" | "failed";
  summary: string;
  duration_ms: number;
}

/**
 * Builds the delegate_task tool: a sub-agent with a fresh conversation on the same model, its own
 * step cap, and no delegate_task of its own.
 *
 * Each call runs one child `runTurn` (`system: [system]`, no history, input = goal plus an optional
 * "Context:" block) before the tool returns `{results: [{task_index, status, summary, duration_ms}],
 * total_duration_ms}`; a child that throws is reported as status "failed" with the error message,
 * except when `signal` aborted, which is rethrown. `background: true` never defers the work:
 * baton has no background executor, so the task always runs inline. When
 * the turn's `context.async_delivery` is false (every bound turn of this bundle) the result also
 * carries a `note` saying so; when it is true (only outside a bound turn) the task runs inline
 * without the note. No handle, id or "dispatched" status is ever returned.
 *
 * Throws TypeError if `tools` contains delegate_task or `maxSteps` is not a positive integer.
 */
export function createDelegateTaskTool(options: {
  model: ChatModel;
  /** Whether a child's tool call would need approval (then it is refused: a child cannot ask). */
  asks?: (tool: Tool, args: Record<string, unknown>) => boolean;
  /** The child's tools: must not contain delegate_task. */
  tools: ToolRegistry;
  system: string;
  /** The model name the child asks for (the parent turn's); unset: the model's own default. */
  modelName?: string;
  /** The deployment's hooks: the child's tool calls are asked of `toolCall` as the parent's are. */
  hooks?: HookOptions;
  maxSteps: number;
  now?: () => number;
}): Tool {
  const { model, tools, system, maxSteps, modelName, hooks } = options;
  const now = options.now ?? Date.now;
  if (tools.get(_NAME)) {
    throw new TypeError(`${_NAME}: the child's tools must not contain ${_NAME}`);
  }
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new TypeError(`${_NAME}: maxSteps must be a positive integer`);
  }
  return defineTool<Record<string, unknown>>({
    name: _NAME,
    description:
      "Runs a sub-agent on a self-contained goal and returns its summary. The sub-agent starts a " +
      "fresh conversation (it sees none of this one) and cannot delegate further, so put " +
      "everything it needs in goal and context. The task finishes before this call returns.",
    parameters: {
      type: "object",
      properties: {
        goal: { type: "string", description: "The self-contained task for the sub-agent." },
        context: { type: "string", description: "Background facts the sub-agent needs." },
        background: {
          type: "boolean",
          description:
            "Request background execution. There is no background executor: the task always runs " +
            "before this call returns, and its result is in the response.",
        },
      },
      required: ["goal"],
      additionalProperties: false,
    },
    async run(raw, { signal, context }) {
      const started = now();
      const args = _parseArgs(raw);
      const task = await _runChild(args, signal);
      const result: {
        results: _TaskResult[];
        total_duration_ms: number;
        note?: string;
      } = { results: [task], total_duration_ms: _elapsed(started, now()) };
      if (args.background === true && !context.async_delivery) result.note = _BACKGROUND_NOTE;
      return result;
    },
  });

  async function _runChild(args: _Args, signal: AbortSignal): Promise<_TaskResult> {
    const started = now();
    const finish = (status: _TaskResult["status"], summary: string): _TaskResult => ({
      task_index: 0,
      status,
      summary,
      duration_ms: _elapsed(started, now()),
    });
    try {
      const turn = await runTurn({
        model,
        ...(modelName ? { modelName } : {}),
        ...hooks,
        tools,
        system: [system],
        history: [],
        input: args.goal + (args.context ? "\n\nContext:\n" + args.context : ""),
        maxSteps,
        signal,
        // A child turn cannot pause for approval: its asking calls are refused, never run unasked.
        ...(options.asks ? { asks: options.asks, onAsk: "refuse" as const } : {}),
      });
      return finish("completed", turn.reply);
    } catch (error) {
      if (signal.aborted) throw error;
      return finish("failed", error instanceof Error ? error.message : String(error));
    }
  }
}

function _parseArgs(raw: Record<string, unknown>): _Args {
  const { goal, context, background } = raw;
  if (typeof goal !== "string" || goal.trim() === "") {
    throw new Error(`${_NAME}: "goal" must be a non-empty string`);
  }
  if (context !== undefined && typeof context !== "string") {
    throw new Error(`${_NAME}: "context" must be a string when given`);
  }
  if (background !== undefined && typeof background !== "boolean") {
    throw new Error(`${_NAME}: "background" must be a boolean when given`);
  }
  return { goal, context, background };
}

function _elapsed(from: number, to: number): number {
  return Math.max(0, Math.round(to - from));
}

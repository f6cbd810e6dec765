// Agent tools: the registration API deployers use, and the built-in session_info; any runtime.
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { type ContextFields, currentContext, type SessionContext } from "../runtime/mod.ts";

/** What a tool's `run` gets besides its arguments. */
export interface ToolRunOptions {
  /** Aborted when the turn is stopped or times out. */
  signal: AbortSignal;
  /**
   * The turn's context, every field resolved (as `currentContext()` of lib/runtime/session_context.ts
   * reads it inside the turn, which keeps working): platform, chat, user, session key, message.
   */
  context: SessionContext;
}

/**
 * Whether a call of a tool waits for its user's approval: `"always"`, or a function of the call's
 * arguments and the turn's bound context (true: ask). Unset: the tool never asks by itself.
 */
export type ToolApproval<A = Record<string, unknown>> =
  | "always"
  | ((args: A, context: ContextFields) => boolean);

/**
 * An agent tool. `parameters` is a JSON Schema object; `run` returns any JSON-serialisable value
 * (a string is passed to the model as is). Throwing reports the error to the model. With
 * `approval`, a call first pauses the turn until the user answers (see docs/guides/approvals.md).
 */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  approval?: ToolApproval<A>;
  run(args: A, options: ToolRunOptions): unknown | Promise<unknown>;
}

/**
 * Whether a call of `tool` with `args` must be approved first: listed in `listed`
 * (`APPROVAL_TOOLS`), or its own `approval` says so for these arguments and the bound context.
 */
export function toolAsks(
  tool: Tool,
  args: Record<string, unknown>,
  listed: ReadonlySet<string>,
): boolean {
  if (listed.has(tool.name) || tool.approval === "always") return true;
  return typeof tool.approval === "function" && tool.approval(args, currentContext()) === true;
}

/** Type helper for declaring a tool with typed arguments. */
export function defineTool<A>(tool: Tool<A>): Tool {
  return tool as unknown as Tool;
}

/** Built-in: returns the current turn's bound context. */
export const sessionInfoTool: Tool = defineTool({
  name: "session_info",
  description:
    "Returns this conversation's context: platform, chat, thread, user, session key, message id.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run(_args, { context: ctx }) {
    return {
      platform: ctx.platform,
      chat_id: ctx.chat_id,
      thread_id: ctx.thread_id,
      user_id: ctx.user_id,
      user_name: ctx.user_name,
      session_key: ctx.session_key,
      message_id: ctx.message_id,
      // A scheduled job's turn says which job it is.
      ...(ctx.job_id ? { job_id: ctx.job_id } : {}),
      async_delivery: ctx.async_delivery,
    };
  },
});

/** The tools of one agent, by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Tool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a name may be registered once. */
  register(tool: Tool): this {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) {
      throw new TypeError(`invalid tool name: ${tool.name}`);
    }
    if (this.#tools.has(tool.name)) throw new TypeError(`tool registered twice: ${tool.name}`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  /**
   * A new registry with this one's tools and `extra` (remote tools listed for one turn); an extra
   * tool whose name is taken, or repeated, is left out rather than failing the turn.
   */
  with(extra: readonly Tool[]): ToolRegistry {
    const registry = new ToolRegistry([...this.#tools.values()]);
    for (const tool of extra) {
      if (!registry.#tools.has(tool.name)) registry.register(tool);
    }
    return registry;
  }

  /** The tool of that name, if registered. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** The tools in the Chat Completions `tools` shape. */
  definitions(): ChatCompletionTool[] {
    return [...this.#tools.values()].map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
}

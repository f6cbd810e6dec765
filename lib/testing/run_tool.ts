// runTool: a deployment's tool run in a unit test with a turn context bound, as a turn would run it; any runtime with node:async_hooks (Deno, Node).
import type { Tool } from "../agent/tools.ts";
import { currentContext, withSessionContext } from "../runtime/session_context.ts";
import type { ContextFields } from "../runtime/session_context.ts";

/** What `runTool` binds around the call. */
export interface RunToolOptions {
  /** The turn's context (platform, chat_id, user_id, user_name, session_key, …); unset fields read "". */
  context?: Omit<ContextFields, "async_delivery">;
  /** Aborts the call as a stopped turn would (default: never). */
  signal?: AbortSignal;
}

/**
 * Runs `tool` with `args` as a turn does: the context bound for the call (so `currentContext()`
 * from `baton/context` reads it inside, and `options.context` of `run` is the same), the signal
 * in its options. Resolves with what `run` returns; rejects with what it throws (a turn would
 * tell the model). Arguments are passed as given: no schema check, as in a turn.
 *
 * ```ts
 * const result = await runTool(rollDice, { sides: 6 }, { context: { platform: "telegram", user_id: "42" } });
 * ```
 */
export function runTool(
  tool: Tool,
  args: Record<string, unknown>,
  options: RunToolOptions = {},
): Promise<unknown> {
  const signal = options.signal ?? new AbortController().signal;
  return withSessionContext(
    options.context ?? {},
    {},
    async () => await tool.run(args, { signal, context: currentContext() }),
  );
}

// The deployment's own agent tools, added to the built-ins (session_info); Workers.
import type { Tool } from "../lib/agent/mod.ts";

/**
 * Add your tools here. Each is `defineTool({ name, description, parameters, run })` from
 * lib/agent/tools.ts; `run(args, { signal, context })` gets the turn's context in its options (the same
 * as `currentContext()` from lib/runtime/session_context.ts reads). See README, "Adding tools".
 */
export const tools: Tool[] = [];

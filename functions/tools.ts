// The deployment's own agent tools, added to the built-ins (session_info); Workers.
import type { Tool } from "../lib/tools.ts";

/**
 * Add your tools here. Each is `defineTool({ name, description, parameters, run })` from
 * lib/tools.ts; `run` may read the turn's context with `currentContext()` from
 * lib/session_context.ts. See README, "Adding tools".
 */
export const tools: Tool[] = [];

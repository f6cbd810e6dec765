// The reference deployment's own agent tools, added to the built-ins (session_info); Workers.
import type { Tool } from "./mod.ts";

/**
 * This repo's Worker's tools (none): handed to `defineBaton` in functions/index.ts. A deployment of
 * its own depends on baton as a package and passes its tools there instead (see
 * docs/guides/library.md and examples/my-agent/).
 */
export const tools: Tool[] = [];

// The package's `baton/tools` face: how a deployment defines its agent tools; runtime-neutral.
export { defineTool } from "../agent/tools.ts";
export type { Tool, ToolApproval, ToolRunOptions } from "../agent/tools.ts";

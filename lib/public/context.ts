// The package's `baton/context` face: the running turn's context as a tool or prompt reads it; any runtime with node:async_hooks.
export { currentContext } from "../runtime/session_context.ts";
export type { ContextField, ContextFields, SessionContext } from "../runtime/session_context.ts";
export type { PromptContext } from "../deployment/deployment.ts";

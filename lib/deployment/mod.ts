// One deployment: its settings read from the Worker's env, and the turn executor (model, built-in tools) they assemble; runtime-neutral.
export { batonToolNames, createTurnExecutor } from "./agent.ts";
export { readConfig } from "./config.ts";
export type { BatonConfig } from "./config.ts";

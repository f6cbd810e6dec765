// The package's `baton/testing` face: a tool run with a bound context, and a fake OpenAI-compatible model on loopback for a worker under test; Deno or Node (node:http, node:async_hooks).
export { runTool } from "./run_tool.ts";
export type { RunToolOptions } from "./run_tool.ts";
export { startFakeModel } from "./fake_model.ts";
export type { FakeModel, FakeModelRequest, FakeModelStep } from "./fake_model.ts";

// The bench's public face: its phases, rig, baseline and report for scripts/bench.ts; Deno.
export { baselineRef, buildBaseline } from "./baseline.ts";
export { accessCheck } from "./phases_access.ts";
export { compactedTranscript } from "./phases_compaction.ts";
export { cost } from "./phases_cost.ts";
export { liveReply } from "./phases_live.ts";
export { telegramPhoto } from "./phases_media.ts";
export { memoryCost } from "./phases_memory.ts";
export { responsesContinuation } from "./phases_responses.ts";
export { runtimeFloor } from "./phases_runtime.ts";
export { fanOut, sessionsCurve } from "./phases_sessions.ts";
export { telegram } from "./phases_telegram.ts";
export { startupCost } from "./phases_startup.ts";
export { bundleSize, longTranscript } from "./phases_transcript.ts";
export { modelCallsPerTurn, overhead, sameSession, streaming } from "./phases_turns.ts";
export { cpuModel } from "./proc.ts";
export { r1, r2, Report, writeReport } from "./report.ts";
export { MAX_QUEUED, Rig } from "./rig.ts";
export type { Phase } from "./rig.ts";

// The chaos run's public face: the run and the soak for scripts/chaos.ts, and what the chaos tests check; Deno.
export { APPROVAL_LABELS } from "./approvals.ts";
export { noFaults } from "./fake_server.ts";
export { FLOOD_LABELS, floodStep, planFlood } from "./floods.ts";
export { JOB_LABELS } from "./jobs.ts";
export { newPlatformChat, replyLinkOf } from "./new_platforms.ts";
export type { ChaosObservation, ShownPost } from "./observation.ts";
export { CHAOS_WAYS, planChaos, seededRandom } from "./plan.ts";
export type { ChaosMessage, ChaosWay } from "./plan.ts";
export { REPLAY_LABELS } from "./replays.ts";
export { figure, LABELS } from "./report.ts";
export type { ChaosReport } from "./report.ts";
export { formatChaosReport, formatChaosSummary, runChaos } from "./run.ts";
export type { ChaosOptions } from "./options.ts";
export { formatSoakReport, judgeRss, runSoak } from "./soak.ts";
export { verifyChaos } from "./verify.ts";

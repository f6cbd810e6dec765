// The session core's public surface: the coordinator, its options and shapes, the run events' final set; runtime-neutral.
export { SessionSentinel } from "./session_sentinel.ts";
export type { SentinelOptions } from "./sentinel_options.ts";
export type { SessionStorage } from "./session_db.ts";
export type { EventSink } from "./event_sender.ts";
export type { OutboundEventType, StoredEvent } from "./event_outbox.ts";
export type { TenantJobCount } from "./tenant_job_sync.ts";
export { FINAL_RUN_EVENTS } from "./run_events.ts";
export * from "./types.ts";
export { APPROVAL_CHOICES, type ApprovalChoice } from "./approvals.ts";
export { GROUP_STOP_MODES, type GroupStop } from "./group_stop.ts";
export type {
  JobAnswer,
  JobOrigin,
  JobRequest,
  JobScheduler,
  JobSkip,
  JobSpec,
  JobView,
} from "./job_scheduler.ts";
export {
  DIRECTORY_STATUSES,
  type DirectoryEntry,
  type DirectoryStatus,
  type DirectoryWriter,
} from "./directory_entry.ts";
export type { CompactionOptions, Summarizer, SummaryRequest } from "./compactor.ts";

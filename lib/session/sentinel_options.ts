// A session sentinel's tunables and the host's hooks (reply channel, drain starter, job check, directory); runtime-neutral.
import type { TurnHooks } from "../agent/turn_hooks.ts";
import type { ReplyChannel } from "../chat/mod.ts";
import type { ModelMenu } from "../agent/mod.ts";
import type { EventSink } from "./event_sender.ts";
import type { DirectoryWriter } from "./directory_entry.ts";
import type { JobCheck } from "./due_job_verdicts.ts";
import type { GroupStop } from "./group_stop.ts";
import type { TenantJobCount } from "./tenant_job_sync.ts";
import type { BusyMode } from "./types.ts";
import type { CompactionOptions } from "./compactor.ts";
import type { JobSchedulerOptions } from "./job_scheduler.ts";
import type { TurnSpendOptions } from "./turn_spend.ts";
import type { MediaRetentionOptions } from "./media_retention.ts";

/** Tunables of a sentinel. */
export interface SentinelOptions {
  /** Most recent transcript messages a turn sees. */
  historyWindow: number;
  /**
   * Long conversations: past `contextTokens` (`CONTEXT_TOKENS`) the oldest turns are summarised
   * by `summarize` (compactor.ts); absent: never compacted.
   */
  compaction?: CompactionOptions;
  /** The daily token caps' session side (turn_spend.ts); absent: usage is only summed. */
  spend?: TurnSpendOptions;
  /** A turn is aborted and failed after this long. */
  turnTimeoutMs: number;
  /** The watchdog alarm fires this long after a claim while a turn runs, to recover a dead executor. */
  leaseMs: number;
  /** An interrupted message runs again at most this many times in all. */
  maxAttempts: number;
  /** After this long in one alarm, the drain hands over to a fresh alarm. */
  drainBudgetMs: number;
  /** Sends replies and notices of messages that carry a reply target. */
  channel?: ReplyChannel;
  /** Busy-input policy; default "queue". */
  busyMode?: BusyMode;
  /** Most messages waiting per session; one more is refused. Default 32. */
  maxQueued?: number;
  /** Whether chat users get the queued notice (at most once per 30 s). Default true. */
  busyNotice?: boolean;
  /** Who may /stop or /new a turn in a group chat (`GROUP_STOP`); default `sender`. */
  groupStop?: GroupStop;
  /** The models `/model` may choose (`MODELS`) and the default (`LLM_MODEL`); none: choice is off. */
  models?: ModelMenu;
  /** Longest wait for one part's send, Retry-After included, before giving up on it. */
  maxSendWaitMs?: number;
  /** Whether chat turns preview their reply as it grows (`STREAM_REPLIES`); default true. */
  streamReplies?: boolean;
  /** Scheduled jobs not done yet, at most, per session; default 20. */
  maxJobs?: number;
  /**
   * Asked before a due job fires, with the context it was created in and a key naming the
   * occurrence (unique in the session, the same when asked again): true runs it, false removes
   * the job (its creator lost access), a skip records the occurrence failed instead of running
   * it (its creator is over their quota). A check that fails lets the job run, and says so in
   * the log.
   */
  jobAllowed?: JobCheck;
  /** The access record a job's turn settles its tokens with (JobSchedulerOptions `jobSpend`). */
  jobSpend?: JobSchedulerOptions["jobSpend"];
  /**
   * The session's API tenant's count of its jobs (`MAX_JOBS_PER_TENANT`): asked before a job is
   * created, told when the session's live jobs change. None: no tenant cap, no I/O.
   */
  tenantJobs?: TenantJobCount;
  /** How long an approval question waits before it counts as denied; default 24 h (chat), 10 min (API). */
  approvalTimeoutMs?: { chat: number; api: number };
  /**
   * Starts `drain()` now, bound as the host binds its entry points. Given, an idle session's turn
   * starts on submit and the alarm is only the watchdog; without it the alarm starts the drain.
   */
  startDrain?: () => void;
  /**
   * The deployment's hooks (`turnStart` as a turn starts, `turnEnd` once its end is stored,
   * `toolCall` is the executor's), each within `hookTimeoutMs` (`HOOK_TIMEOUT_MS`, default 5 s).
   */
  hooks?: TurnHooks;
  hookTimeoutMs?: number;
  /**
   * Where the session's events go (`EVENTS_WEBHOOK_URL`): turn.completed, turn.failed,
   * approval.requested and job.failed, each stored with what it reports and posted from there.
   * None: no event is written.
   */
  events?: EventSink;
  /**
   * Media retention (`MEDIA_RETENTION_DAYS`): the media the session stored are deleted from
   * `store` by the alarm once older than `retentionMs` (media_retention.ts). None: kept.
   */
  mediaRetention?: MediaRetentionOptions;
  /** Where the session's directory row goes (see `DirectorySync`); none: no directory. */
  directory?: DirectoryWriter;
  now?: () => number;
}

// The parts a session sentinel coordinates (stores, sender, gate, jobs, runner, admission…), wired together; runtime-neutral.
import { ApprovalGate } from "./approval_gate.ts";
import { DirectorySync } from "./directory_sync.ts";
import { CommandRunner } from "./command_runner.ts";
import { MessageAdmission } from "./message_admission.ts";
import type { SentinelOptions } from "./sentinel_options.ts";
import { JobScheduler } from "./job_scheduler.ts";
import { TenantJobSync } from "./tenant_job_sync.ts";
import { OutboxSender } from "./outbox_sender.ts";
import { MediaRetention } from "./media_retention.ts";
import { EventOutboxStore } from "./event_outbox.ts";
import { EventSender } from "./event_sender.ts";
import { TurnEvents } from "./turn_events.ts";
import type { SessionStorage } from "./session_db.ts";
import { SessionStores } from "./session_stores.ts";
import { TurnRunner } from "./turn_runner.ts";
import type { TurnExecutor } from "./types.ts";

/** A sentinel's parts, each handed the others it works with. */
export interface SentinelParts {
  stores: SessionStores;
  sender: OutboxSender | null;
  runner: TurnRunner;
  commands: CommandRunner;
  admission: MessageAdmission;
  gate: ApprovalGate;
  jobs: JobScheduler;
  /** Its API tenant's count of the session's jobs (`options.tenantJobs`). */
  tenantJobs: TenantJobSync;
  /** Its events (`options.events`) and turnEnd hook, told where messages settle. */
  turnEvents: TurnEvents;
  /** The session's directory row, kept current (`options.directory`). */
  directory: DirectorySync | null;
  /** The media past MEDIA_RETENTION_DAYS, swept by the alarm (`options.mediaRetention`). */
  media: MediaRetention | null;
}

/**
 * Builds a sentinel's parts over `storage` by `options`; `onAnswered` runs when an approval
 * question is answered (the sentinel re-arms its watchdog: the paused turn holds the session again).
 */
export function sentinelParts(
  storage: SessionStorage,
  execute: TurnExecutor,
  options: SentinelOptions,
  now: () => number,
  onAnswered: () => void,
): SentinelParts {
  const stores = new SessionStores(storage, now);
  const { db, outbox } = stores;
  const sender = options.channel
    ? new OutboxSender(db, outbox, {
      channel: options.channel,
      maxSendWaitMs: options.maxSendWaitMs ?? 120_000,
      previews: options.streamReplies ?? true,
      contextOf: (seq) => stores.inbox.context(seq),
      now,
    })
    : null;
  // Events and the turnEnd hook, told where a message settles and a question is asked.
  const events = options.events ? new EventOutboxStore(db) : null;
  const turnEvents = new TurnEvents(stores, {
    outlet: events && options.events
      ? {
        store: events,
        sender: new EventSender(db, events, options.events, {
          maxWaitMs: options.maxSendWaitMs ?? 120_000,
          now,
        }),
      }
      : null,
    hooks: options.hooks,
    hookTimeoutMs: options.hookTimeoutMs,
    now,
  });
  stores.onSettle = (tx, seq, outcome) => turnEvents.settled(tx, seq, outcome);
  const gate = new ApprovalGate(stores, {
    onAsked: (tx, seq, message, question) => turnEvents.asked(tx, seq, message, question),
    sender,
    timeoutMs: options.approvalTimeoutMs ?? { chat: 24 * 60 * 60_000, api: 10 * 60_000 },
    onAnswered,
    now,
  });
  const jobs = new JobScheduler(stores, {
    maxJobs: options.maxJobs ?? 20,
    now,
    ...(options.jobSpend ? { jobSpend: options.jobSpend } : {}),
  });
  const tenantJobs = new TenantJobSync(options.tenantJobs, () => stores.jobs.liveCount());
  const runner = new TurnRunner(stores, {
    scheduler: jobs,
    tenantJobs,
    execute,
    gate,
    historyWindow: options.historyWindow,
    ...(options.compaction ? { compaction: options.compaction } : {}),
    ...(options.spend ? { spend: options.spend } : {}),
    turnTimeoutMs: options.turnTimeoutMs,
    maxAttempts: options.maxAttempts,
    sender,
    hooks: options.hooks,
    hookTimeoutMs: options.hookTimeoutMs,
    now,
  });
  const commands = new CommandRunner(
    stores,
    runner,
    gate,
    now,
    options.groupStop,
    options.models,
  );
  const admission = new MessageAdmission({ stores, gate, commands, runner, sender }, options);
  const directory = options.directory ? DirectorySync.attach(stores, options.directory, now) : null;
  const media = options.mediaRetention
    ? new MediaRetention(
      stores.db,
      options.mediaRetention,
      () => stores.claims.state().seq !== null,
    )
    : null;
  return {
    stores,
    sender,
    runner,
    commands,
    admission,
    gate,
    jobs,
    tenantJobs,
    turnEvents,
    directory,
    media,
  };
}

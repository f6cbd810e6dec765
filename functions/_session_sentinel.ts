// Builds a session Durable Object's sentinel from the deployment, its config and the Worker's bindings; Workers.
import {
  adapterMediaFetch,
  type BatonConfig,
  createSummarizer,
  createTurnExecutor,
  type Deployment,
  withChatMedia,
} from "../lib/deployment/mod.ts";
import { type PlatformAdapter, type PlatformEnv, replyChannel } from "../lib/chat/mod.ts";
import { eventsWebhookSink } from "../lib/platforms/events_webhook.ts";
import { log } from "../lib/runtime/mod.ts";
import { McpToolbox } from "../lib/mcp/mcp_tools.ts";
import { SessionSentinel } from "../lib/session/mod.ts";
import { d1DirectoryWriter } from "./_directory.ts";
import { r2MediaStore } from "./r2_media_store.ts";
import { evictingMediaStore, ImageCache, mediaLinker, notingMediaStore } from "../lib/media/mod.ts";
import { accessMemoryStore } from "./_memory_store.ts";
import type { Env } from "./env.ts";
import { jobSpend } from "../lib/access/job_creator.ts";
import { admitJobOccurrence } from "./_job_creator.ts";
import { tenantJobCount } from "./_tenant_jobs.ts";
import { sessionSpend } from "./_spend.ts";

/** What the session object hands the sentinel it builds: the sentinel's own callbacks into it. */
export interface SentinelHost {
  /** Tells the built sentinel of media stored now (it exists by the time any is stored). */
  noteMedia(key: string): void;
  /** Starts a drain, bound like the alarm. */
  startDrain(): void;
  /** Every adapter a reply may go out through (`chatAdapters()`, loaded by the object). */
  adapters: readonly PlatformAdapter[];
}

/**
 * The session's sentinel over `ctx.storage`: the deployment's tools, prompts and hooks, and every
 * setting of `config` that a turn, a send, a job or the media sweep reads.
 */
export function buildSessionSentinel(
  ctx: DurableObjectState,
  env: Env,
  deployment: Deployment,
  config: BatonConfig,
  host: SentinelHost,
): SessionSentinel {
  // MCP servers' tool lists live as long as this object: its turns share them.
  const { mcp } = config;
  for (const problem of mcp.problems) log.warn("MCP_SERVERS entry ignored", { problem });
  const remote = mcp.servers.length ? new McpToolbox(mcp) : undefined;
  const { tools, turn, hooks = {} } = deployment;
  // The deployment's hooks (defineBaton's `hooks`), each within HOOK_TIMEOUT_MS.
  const hooking = { hooks, hookTimeoutMs: config.hookTimeoutMs };
  // Every medium this object stores is noted for MEDIA_RETENTION_DAYS (the alarm deletes it).
  // The images its turns show are read and encoded once per object (`images`), dropped from
  // there when the sweep deletes them.
  const images = new ImageCache();
  const media = env.MEDIA
    ? evictingMediaStore(
      notingMediaStore(r2MediaStore(env.MEDIA), (key) => host.noteMedia(key)),
      images,
    )
    : undefined;
  const retentionDays = config.mediaRetentionDays;
  const link = mediaLinker(config.mediaLinks);
  const memory = config.memory.on ? accessMemoryStore(env) : undefined;
  // A chat's photos, voice notes and files are fetched inside the turn (media_turns.ts).
  const executor = withChatMedia(
    createTurnExecutor(config, tools, remote, turn, hooking, media, memory, images),
    {
      fetchFor: adapterMediaFetch(host.adapters, env as unknown as PlatformEnv),
      settings: config.media,
      ...(media ? { store: media } : {}),
    },
  );
  const { eventsWebhook } = config;
  return new SessionSentinel(ctx.storage, executor, {
    ...hooking,
    ...(eventsWebhook ? { events: eventsWebhookSink(eventsWebhook) } : {}),
    historyWindow: config.historyWindow,
    ...(media && retentionDays > 0
      ? { mediaRetention: { store: media, retentionMs: retentionDays * 86_400_000 } }
      : {}),
    // CONTEXT_TOKENS: the oldest turns summarised by the model once too long (compactor.ts).
    compaction: {
      contextTokens: config.contextTokens,
      summarize: createSummarizer(config),
    },
    // Daily token caps: SESSION_TOKENS_PER_DAY here, a reservation settled after its turn.
    spend: sessionSpend(env, config.spend),
    turnTimeoutMs: config.turnTimeoutMs,
    leaseMs: config.turnLeaseMs,
    maxAttempts: 3,
    drainBudgetMs: 300_000,
    busyMode: config.busyMode,
    maxQueued: config.maxQueued,
    busyNotice: config.busyAck,
    groupStop: config.groupStop,
    models: { allowed: config.models, default: config.llmModel },
    // Files a turn's tools returned go out from MEDIA: uploaded, or linked (signed) or named.
    channel: replyChannel(host.adapters, env as unknown as PlatformEnv, {
      ...(media ? { store: media } : {}),
      ...(link ? { link } : {}),
    }),
    approvalTimeoutMs: config.approvalTimeoutMs,
    maxJobs: config.maxJobsPerSession,
    streamReplies: config.streamReplies,
    // A revoked user's jobs stop, and a job's turns count against its creator's quota: asked
    // before each fire, never on a message's path.
    jobAllowed: (context, occurrence) => admitJobOccurrence(env, config, context, occurrence),
    // A job's turns settle their tokens with its creator's record (lib/access/job_creator.ts).
    jobSpend,
    // An API tenant's jobs across its sessions: asked when one is created, told when one ends.
    tenantJobs: tenantJobCount(
      env,
      ctx.storage.kv,
      ctx.id.name ?? "",
      config.maxJobsPerTenant,
    ),
    ...(env.DIRECTORY ? { directory: d1DirectoryWriter(env.DIRECTORY) } : {}),
    // An idle session starts its turn at once, bound like the alarm; the alarm stays the watchdog.
    startDrain: () => host.startDrain(),
  });
}

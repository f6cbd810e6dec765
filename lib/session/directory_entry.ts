// A session's row in the session directory (what it is, read from the session's own stores) and the writer it goes to; runtime-neutral.
import { tenantOfSessionKey } from "../api/mod.ts";
import type { SessionStores } from "./session_stores.ts";

/** The statuses a directory row shows, and `GET /v1/sessions?status=` filters on. */
export const DIRECTORY_STATUSES = ["idle", "running", "waiting_for_approval", "queued"] as const;

/** Where a session stands, as the directory lists it. */
export type DirectoryStatus = typeof DIRECTORY_STATUSES[number];

/** One session's row in the directory. Times are epoch milliseconds. */
export interface DirectoryEntry {
  key: string;
  /** The API tenant that owns the session, or null for a platform session. */
  tenant: string | null;
  platform: string;
  /** The first message, on one line, at most `TITLE_CHARS` characters. */
  title: string;
  created_at: number;
  /** A message in, a turn started or ended: never moves back (the writer keeps the maximum). */
  last_activity_at: number;
  /** Messages received, commands included. */
  messages: number;
  /** Turns whose messages the transcript holds. */
  turns: number;
  status: DirectoryStatus;
  /** Messages waiting behind the running turn (or for the next drain). */
  queued: number;
  /**
   * The chat user of a direct (one-to-one) platform session, whose erasure
   * (`DELETE /v1/users/{platform:user}`) erases it; null for a group chat or an API session.
   */
  user: string | null;
  /**
   * The session's tokens on the latest UTC day it used any (`GET /v1/usage` lists these rows);
   * absent while it used none. Sums only grow: the writer keeps the largest.
   */
  usage?: DirectoryUsage;
}

/** One session's usage row of one UTC day, as the directory keeps it. */
export interface DirectoryUsage {
  day: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost: number;
  turns: number;
}

/**
 * Stores directory rows (the Worker's is D1). `upsert` may throw or reject: the session treats
 * the directory as optional, and writes the row again later.
 */
export interface DirectoryWriter {
  /**
   * Inserts or updates `entry.key`'s row. The writer keeps the first `created_at` and non-empty
   * `title` it stored, and the largest `last_activity_at`, `messages` and `turns`.
   */
  upsert(entry: DirectoryEntry): Promise<void>;
}

/** Longest title kept, in characters. */
export const TITLE_CHARS = 80;

/** `text` as a title: whitespace collapsed to single spaces, cut at `TITLE_CHARS` with an ellipsis. */
export function directoryTitle(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const chars = [...line];
  return chars.length <= TITLE_CHARS ? line : `${chars.slice(0, TITLE_CHARS - 1).join("")}…`;
}

/**
 * The session's row now, or null while it has no message yet (or none with a session key: a
 * pointer or an Idempotency-Key record never gets one).
 */
export function directoryEntry(stores: SessionStores): DirectoryEntry | null {
  const inbox = stores.inbox.summary();
  const key = inbox.latest?.context.session_key;
  if (!key || !inbox.latest || inbox.firstAt === null || inbox.lastAt === null) return null;
  const claim = stores.claims.state();
  const queued = stores.inbox.waitingCount();
  const claimed = claim.seq === null ? null : stores.inbox.get(claim.seq);
  const status: DirectoryStatus = claimed?.status === "waiting"
    ? "waiting_for_approval"
    : claimed
    ? "running"
    : queued > 0
    ? "queued"
    : "idle";
  const tenant = tenantOfSessionKey(key);
  const { group, context } = inbox.latest;
  return {
    key,
    tenant,
    platform: inbox.latest.context.platform ?? "",
    title: directoryTitle(inbox.first?.text ?? ""),
    created_at: inbox.firstAt,
    last_activity_at: Math.max(inbox.lastAt, claim.startedAt ?? 0),
    messages: inbox.lastSeq,
    turns: stores.transcript.turnCount(),
    status,
    queued,
    user: tenant === null && group !== true && context.user_id ? context.user_id : null,
    ..._usage(stores),
  };
}

// The latest day's sums, read with the row (one small indexed read).
function _usage(stores: SessionStores): { usage?: DirectoryUsage } {
  const day = stores.usage.days(1)[0];
  if (!day || day.total_tokens === 0) return {};
  const { total_tokens: _, ...usage } = day;
  return { usage };
}

// Read-only view of one session for the console's inspector: inbox rows, reply parts, run timelines, the last turn's context; runtime-neutral.
import { UNCONFIRMED_SEND } from "./outbox_sender.ts";
import type { InboxHistoryRow } from "./inbox.ts";
import type { OutboxRecord } from "./outbox.ts";
import type { SessionStorage } from "./session_db.ts";
import { SessionStores } from "./session_stores.ts";
import { CompactionStore } from "./compaction.ts";
import { isStopped } from "./types.ts";
import type {
  InspectedEvent,
  InspectedMessage,
  InspectedPart,
  InspectedStatus,
  SessionInspection,
} from "./inspection.ts";

export type { SessionInspection } from "./inspection.ts";

/** How many characters of a message's text the inspector shows. */
export const TEXT_PREVIEW = 500;

/** Rows of each kind the inspector reads: a view of the recent past, not an archive. */
const _LIMIT = 50;

/**
 * Reads session `storage` for the inspector; null when it holds no session (never used, or a
 * conversation pointer): reading must not create one. Changes nothing else.
 */
export function inspectSession(storage: SessionStorage): SessionInspection | null {
  if (!holdsSession(storage)) return null;
  // Its own stores over the same database: the reads go through the same code as the sentinel's.
  const stores = new SessionStores(storage, Date.now);
  const rows = stores.inbox.history(_LIMIT);
  const claim = stores.claims.state();
  const newest = rows[0];
  return {
    claim: { seq: claim.seq, started_at: claim.startedAt, conversation: claim.conversation },
    compactions: new CompactionStore(stores.db).inspect(claim.conversation),
    inbox: rows.map(_message),
    parts: stores.outbox.history(_LIMIT).map(_part),
    // Every turn that ran recorded its timeline (a command, a merged message: none).
    runs: rows.map((row) => ({
      seq: row.seq,
      events: inspectedTimeline(stores.events.timeline(row.seq)),
    })).filter((run) => run.events.length > 0),
    last_turn: newest ? { seq: newest.seq, context: newest.context, reply: newest.reply } : null,
  };
}

/**
 * A run's events with elapsed times and, for each end, the duration since its start; a model call
 * and a send, which record one event at their end, carry their own duration.
 */
export function inspectedTimeline(
  events: { type: string; data: Record<string, unknown>; at: number | null }[],
): InspectedEvent[] {
  const first = events.find((event) => event.at !== null)?.at ?? null;
  const starts = new Map<string, number>();
  return events.map((event) => {
    const { type, data, at } = event;
    const callId = typeof data.call_id === "string" ? data.call_id : "";
    let duration: number | null = null;
    if (at !== null) {
      if (type === "run.started") starts.set("run", at);
      else if (type === "tool.started") starts.set(`tool:${callId}`, at);
      const start = type === "tool.completed"
        ? starts.get(`tool:${callId}`)
        : /^run\.(completed|failed|cancelled)$/.test(type)
        ? starts.get("run")
        : undefined;
      if (start !== undefined) duration = at - start;
    }
    if (
      duration === null && /^(model|reply)\./.test(type) && typeof data.duration_ms === "number"
    ) {
      duration = data.duration_ms;
    }
    return {
      type,
      at,
      elapsed_ms: at !== null && first !== null ? at - first : null,
      duration_ms: duration,
      data,
    };
  });
}

function _message(row: InboxHistoryRow): InspectedMessage {
  const error = row.outcome?.status === "failed" ? row.outcome.error : null;
  return {
    seq: row.seq,
    status: _status(row),
    command: row.status === "command",
    received_at: row.receivedAt,
    finished_at: row.finishedAt,
    duration_ms: row.finishedAt === null ? null : row.finishedAt - row.receivedAt,
    attempts: row.attempts,
    merged_into: row.mergedInto,
    text: row.text.slice(0, TEXT_PREVIEW),
    error,
  };
}

function _status(row: InboxHistoryRow): InspectedStatus {
  switch (row.status) {
    case "queued":
    case "merged":
    case "steered":
    case "running":
    case "delivering":
      return row.status;
    case "waiting":
      return "waiting_for_approval";
    case "command":
    case "completed":
      return "done";
    case "failed": {
      return row.outcome?.status === "failed" && isStopped(row.outcome.error)
        ? "cancelled"
        : "failed";
    }
  }
}

function _part(part: OutboxRecord): InspectedPart {
  const doubt = part.error === UNCONFIRMED_SEND ||
    (part.attemptedAt !== null && part.sentAt === null && part.error === null);
  return {
    id: part.id,
    seq: part.seq,
    kind: part.kind,
    index: part.index,
    count: part.count,
    status: doubt ? "in_doubt" : part.sentAt !== null ? "sent" : part.error ? "failed" : "pending",
    created_at: part.createdAt,
    attempted_at: part.attemptedAt,
    sent_at: part.sentAt,
    error: part.error,
    text: part.text.slice(0, TEXT_PREVIEW),
    platform: part.target?.platform ?? null,
  };
}

/**
 * Whether `storage` holds a session's tables (an unused object, a pointer's, or an erased
 * session's has none).
 */
export function holdsSession(storage: SessionStorage): boolean {
  return storage.sql.exec(
    `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox' LIMIT 1`,
  ).toArray().length > 0;
}

// A claimed turn's trace: its message's context on every line it logs, its timeline in the run's events; runtime-neutral.
import { withTurnFrame } from "../runtime/mod.ts";
import type { Claim } from "./claim.ts";
import { type OutboxPart, partLabel } from "./outbox.ts";
import type { PartResult } from "./outbox_sender.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TurnJobs } from "./turn_jobs.ts";
import type { InboundMessage } from "./types.ts";

/** Records one event of a run's timeline. */
export type TimelineRecorder = (type: string, data: Record<string, unknown>) => void;

/**
 * Runs `fn`, work done for message `seq` (its turn, the sending of its reply), in the one frame
 * the turn binds: the message's context alone (the entry's defaults kept), its seq on every line
 * logged, and `jobs` for its tools. The drain that calls it runs in a frame of no message, or of
 * another (the alarm's, or the one a submit started): without this a failed send's line could
 * not say whose it was, and a tool could read another message's fields.
 */
export function traced<T>(message: InboundMessage, seq: number, fn: () => T, jobs?: TurnJobs): T {
  return withTurnFrame({ context: message.context, log: { seq }, ...(jobs ? { jobs } : {}) }, fn);
}

/**
 * Records the events of `claim`'s run while the claim holds the session (a stopped run's late
 * events go nowhere). Every turn records its timeline — model calls, tool calls, sends, its start
 * and end — a few small rows; the reply's text as it grows (`message.delta`) is recorded only for
 * a message that asked for events, since a chat reply's deltas would be most of its turn's rows,
 * and is stored with the event that follows it, not as it streams.
 */
export function timelineRecorder(
  stores: SessionStores,
  claim: Claim,
  message: InboundMessage,
): TimelineRecorder {
  return (type, data) => {
    if (type === "message.delta") {
      // Sent at once and stored with the next event (RunEventStore.stream): no write holds it.
      if (message.events && stores.claims.holds(claim)) {
        stores.events.stream(claim.seq, type, data);
      }
      return;
    }
    stores.db.transaction((tx) => {
      if (stores.claims.holds(claim)) stores.events.emit(tx, claim.seq, type, data);
    });
  };
}

/**
 * Records how the send of reply `part` ended after `ms`: `reply.sent`, or `reply.failed` with the
 * error stored for it (a part left in doubt included). A stop records nothing: its run ends
 * cancelled.
 */
export function recordSend(
  record: TimelineRecorder,
  part: OutboxPart,
  result: PartResult,
  ms: number,
  error: () => string | null,
): void {
  if (result === "stopped") return;
  const data = { part: partLabel(part), duration_ms: ms };
  if (result === "sent") record("reply.sent", data);
  else record("reply.failed", { ...data, error: error() ?? result });
}

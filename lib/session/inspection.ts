// The shape of the console inspector's read of a session (GET /v1/sessions/{key}/inspect): types only, no imports, so the browser console shares them; any runtime.

/** An inbox row's status as the inspector names it (`done`: completed; `cancelled`: stopped or interrupted). */
export type InspectedStatus =
  | "queued"
  | "merged"
  /** Taken by the running turn named in `merged_into` (`/steer`, BUSY_INPUT_MODE=steer). */
  | "steered"
  | "running"
  | "waiting_for_approval"
  | "delivering"
  | "done"
  | "failed"
  | "cancelled";

/** One message of the inbox. */
export interface InspectedMessage {
  seq: number;
  status: InspectedStatus;
  /** A command answered at once (`/stop`, `/new`, …) rather than a turn. */
  command: boolean;
  received_at: number;
  finished_at: number | null;
  /** From arrival to its end (null while it has not ended). */
  duration_ms: number | null;
  attempts: number;
  merged_into: number | null;
  /** The message's text, cut at `TEXT_PREVIEW` characters (session_inspector.ts). */
  text: string;
  error: { message: string; type: string } | null;
}

/** One text sent to a chat user: a reply part or a notice. */
export interface InspectedPart {
  id: number;
  seq: number | null;
  kind: "reply" | "notice";
  index: number;
  count: number;
  /** `in_doubt`: a send left and its answer was never recorded (or it was left unsent for that). */
  status: "pending" | "sent" | "in_doubt" | "failed";
  created_at: number;
  attempted_at: number | null;
  sent_at: number | null;
  error: string | null;
  text: string;
  platform: string | null;
}

/** One event of a run's timeline. */
export interface InspectedEvent {
  type: string;
  /** When it was stored; null for events from before times were stored. */
  at: number | null;
  /** Since the run's first event. */
  elapsed_ms: number | null;
  /** For an end (`tool.completed`, a final `run.*`): since its start (`tool.started`, `run.started`). */
  duration_ms: number | null;
  data: Record<string, unknown>;
}

/**
 * A summary that stands for a conversation's oldest messages in what later turns see
 * (compaction): the transcript keeps the messages themselves.
 */
export interface InspectedCompaction {
  /** The summary as the model wrote it. */
  summary: string;
  /** The 0-based positions, in the conversation, of the first and last message it covers. */
  from: number;
  through: number;
  /** How many messages it covers (earlier summaries' messages are not counted again). */
  messages: number;
  /** The message whose turn (or /compact) wrote it. */
  seq: number | null;
  created_at: number;
}

/** Everything the inspector shows of one session. */
export interface SessionInspection {
  /** The message whose turn holds the session now, and since when; null seq: idle. */
  claim: { seq: number | null; started_at: number | null; conversation: number };
  /** Newest first. */
  inbox: InspectedMessage[];
  /** Newest first. */
  parts: InspectedPart[];
  /** Runs that record events (runs API, streaming completions), newest first. */
  runs: { seq: number; events: InspectedEvent[] }[];
  /** The current conversation's summaries, oldest first; the newest is what turns see. */
  compactions: InspectedCompaction[];
  /** The raw context fields and reply target of the newest message. */
  last_turn: {
    seq: number;
    context: Record<string, unknown> | null;
    reply: Record<string, unknown> | null;
  } | null;
}

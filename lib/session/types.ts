// The session core's public shapes: messages in, outcomes and run events out, the executor contract; runtime-neutral.
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type {
  AttachedFile,
  ChatMessage,
  ModelParams,
  PendingCall,
  ToolCall,
  TurnResume,
} from "../agent/mod.ts";
import type { ParsedCommand, ReplyTarget } from "../chat/mod.ts";
import type { ContextFields } from "../runtime/mod.ts";
import type { InspectedCompaction } from "./inspection.ts";
import type { SnapshotMedium } from "./snapshot_media.ts";
import type { MediaItem, PlatformMedia } from "../media/mod.ts";

/**
 * The access record a turn's tokens are settled with (`InboundMessage.spend`), and the key it
 * settles under (its reservation's, where a daily cap took one).
 */
export interface TurnSpendRecord {
  /** The access object: `sender:<platform:user>` or `tenant:<name>`. */
  record: string;
  key: string;
  /**
   * Whether a daily cap reserved tokens under `key`. False: none was taken (no cap set), so
   * the settlement reads no reservation. Absent (jobs, messages stored before it was carried):
   * one is looked for.
   */
  reserved?: boolean;
}

/** A message handed to a session. */
export interface InboundMessage {
  text: string;
  /** The source's delivery id (webhook-id, update_id, …): a repeat within 24 h never starts a second turn. */
  deliveryKey?: string;
  /**
   * How long `deliveryKey` must be remembered when that is longer than the inbox's day: as long as
   * the platform may deliver it again (`PlatformAdapter.keyMemoryMs`). A repeat within it is a
   * duplicate, its message long gone or not.
   */
  keyMemoryMs?: number;
  /** The turn context to bind when this message runs. */
  context: Omit<ContextFields, "async_delivery">;
  /**
   * The message's media as stored (lib/media/ `MediaItem`: a reference to bytes in the `MEDIA`
   * store, or an https link): kept with its user message in the transcript, never the bytes.
   */
  media?: MediaItem[];
  /**
   * A chat platform's media as announced, not yet fetched (the acknowledgement never waits): the
   * turn fetches and stores them, and its user message keeps references in `media` in their place
   * (lib/deployment/media_turns.ts).
   */
  platformMedia?: PlatformMedia[];
  /**
   * The album this message is one piece of (Telegram's `media_group_id`): its pieces make one
   * turn — each later piece is merged into the first while that waits (lib/session/album.ts).
   */
  album?: string;
  /** Extra system prompt for this turn (e.g. an API caller's system message). */
  system?: string;
  /** Earlier messages that seed the conversation when it has no history yet. */
  seed?: ChatMessage[];
  /** The caller's model parameters for this turn (API callers). */
  params?: ModelParams;
  /**
   * The model this turn asks for: an API request's `model` (checked against `MODELS` where it
   * arrived), else the session's `/model` choice, filled in as the turn starts. Unset: the default.
   */
  model?: string;
  /** The caller's own function tools: a call to one ends the turn with `toolCalls` (API callers). */
  clientTools?: ChatCompletionTool[];
  /** The client's answers to the tool calls that ended its previous turn: this turn's input. */
  toolResults?: ChatMessage[];
  /**
   * The message continues this session's conversation, whose turns must be exactly `seed` (a
   * client that resends its history without X-Session-Id): refused as `history_mismatch` unless the
   * session is idle and its current conversation shows exactly those turns.
   */
  continuesSeed?: boolean;
  /**
   * The message continues turn `continuesAfter` of this session by reference (a Responses request's
   * `previous_response_id`): refused as `history_mismatch` unless the session is idle and that turn
   * completed and is still the last of its current conversation. Nothing of the conversation travels.
   */
  continuesAfter?: number;
  /**
   * The hash of the API request (key scope, session header, body). The same request within a
   * minute of a failed or stopped turn gets that outcome instead of a second run; a delivery key
   * seen again with another hash is refused as `idempotency_key_reused`.
   */
  requestHash?: string;
  /** Where the reply is sent (chat platforms); without it the caller collects the outcome. */
  reply?: ReplyTarget;
  /**
   * The daily token reservation this message's turn took before it was stored (lib/access/
   * token_budget.ts): the access object `record` (a sender's, a tenant's) and the reservation's
   * `key`, settled with the turn's real usage once it is stored. Absent: no cap reserved for it.
   */
  spend?: TurnSpendRecord;
  /**
   * A chat message (chat platforms, the generic webhook): its command, parsed once where it
   * arrived (the Worker's access gate, `chatInbound`), or null for an ordinary text — which may
   * still answer a pending approval question with a bare yes or no. Unset: the message has no
   * commands (API callers, jobs).
   */
  command?: ParsedCommand | null;
  /**
   * The sender is an admin (`ADMIN_USERS`), as the Worker's access check found from the
   * platform's own identity: may answer anyone's approval question.
   */
  admin?: boolean;
  /**
   * The chat is shared by several members (a group, a channel, a GitHub thread; the platform's
   * sender is not `direct`): only the running turn's sender or an admin may /stop or /new it
   * (`GROUP_STOP`).
   */
  group?: boolean;
  /**
   * Record the run's events for a caller (runs API, streaming completions): readable live, the
   * reply's text included. Every turn records its timeline for the inspector without it.
   */
  events?: boolean;
  /** The caller's own data kept with the message and unused by the session (a Responses API request's fields). */
  meta?: Record<string, unknown>;
}

/** One event of a run, as stored and streamed. */
export interface RunEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A run's state as the runs API reports it. */
export interface RunState {
  status: "queued" | "running" | "waiting_for_approval" | "completed" | "failed" | "cancelled";
  output?: string;
  error?: { message: string; type: string };
}

/** A message as stored, with where its run stands (`SessionSentinel.record`). */
export interface MessageRecord {
  message: InboundMessage;
  state: RunState;
  /** The turn's token counts once it completed. */
  usage?: TurnUsage;
  /** Calls of the client's own tools that ended the turn. */
  toolCalls?: ToolCall[];
  /** The reply stopped at the model's output limit. */
  truncated?: boolean;
  /** The files the turn's tools returned (stored in `MEDIA`), for an API's reply. */
  files?: AttachedFile[];
}

/** Token counts of a turn. */
export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** How a message's turn ended. */
export type TurnOutcome =
  | {
    status: "completed";
    reply: string;
    usage: TurnUsage;
    /** Calls of the client's own tools that ended the turn. */
    toolCalls?: ToolCall[];
    /** The reply stopped at the model's output limit (`max_tokens`, `max_output_tokens`). */
    truncated?: boolean;
    /** The files the turn's tools returned (kept on its tool messages): linked in an API's reply. */
    files?: AttachedFile[];
  }
  | { status: "failed"; error: { message: string; type: string } };

/** What `submit` answers once the message is durably stored. */
export interface SubmitReceipt {
  /** The message's seq; 0 for a duplicate whose message was pruned (see `keyMemoryMs`). */
  seq: number;
  duplicate: boolean;
  /**
   * Set when the message was not stored: `queue_full` when `maxQueued` messages wait already,
   * `history_mismatch` when a `continuesSeed` or `continuesAfter` message does not continue
   * this session, `idempotency_key_reused` when its delivery key came before with another request,
   * `session_limit` when the session would be one too many for its API tenant (the host's cap;
   * `notice` says which), `too_large` when the message could not be read back once stored
   * (`notice` names the limit).
   */
  refused?:
    | "queue_full"
    | "history_mismatch"
    | "idempotency_key_reused"
    | "session_limit"
    | "too_large";
  /**
   * A short text for the sender now: a command's answer, the queued notice, the refusal. A chat
   * user gets it through the session's outbox; it is here for callers that answer it themselves.
   */
  notice?: string;
}

/** What the session does with a message that arrives while a turn runs. */
/**
 * `steer`: given to the running turn, which reads it at its next step (lib/session/steers.ts), else
 * queued as its own.
 */
export type BusyMode = "queue" | "interrupt" | "merge" | "steer";

/** A running turn's progress, updated by the executor as it goes. */
export interface TurnProgress {
  /** Model calls started so far (0: still starting). */
  step: number;
  /** The turn's messages so far (user, assistant, tool), kept if the turn is interrupted. */
  messages: ChatMessage[];
  /**
   * Records an event of the run's timeline (model.completed, model.failed, tool.started,
   * tool.completed; message.delta only where `deltas`): every claimed turn has one.
   */
  emit?: (type: string, data: Record<string, unknown>) => void;
  /** Whether the message asked for its reply's text as events (message.delta): the runs API, streams. */
  deltas?: boolean;
  /** Takes each piece of the reply's text as the model writes it, for a chat's live preview. */
  preview?: (delta: string) => void;
  /**
   * The messages steered into this turn since it last asked (`/steer`, BUSY_INPUT_MODE=steer), each
   * taken durably under the turn's claim before it is returned: asked before each model call.
   */
  steers?: () => ChatMessage[];
}

/** A session's state as the sessions API reports it. */
export interface SessionSnapshot {
  running: boolean;
  queued: number;
  /**
   * The current conversation's newest messages, within `READ_MAX_CHARS` of text; `media`: a
   * message's images and files, as references (lib/session/snapshot_media.ts).
   */
  messages: { role: string; content: string; media?: SnapshotMedium[] }[];
  /** How many older messages of the conversation were left out (0 when none). */
  omitted: number;
  /**
   * The conversation's summaries (compaction), oldest first, each with the positions of the
   * messages it covers; absent when there is none. The messages themselves stay in `messages`.
   */
  compactions?: InspectedCompaction[];
}

/** What a turn produced: the reply, the messages to keep, the token counts. */
export interface TurnResult {
  reply: string;
  messages: ChatMessage[];
  usage: TurnUsage;
  /** Calls of the client's own tools that ended the turn. */
  toolCalls?: ToolCall[];
  /** The reply stopped at the model's output limit. */
  truncated?: boolean;
  /** Model calls made, counting those before a pause. */
  steps?: number;
  /**
   * The turn paused before running its last step's tools: these calls wait for the user's
   * approval, and `messages` are the turn's messages so far.
   */
  paused?: PendingCall[];
}

/** What a turn is told about approvals: tools the user already approved, and the pause it resumes. */
export interface TurnApprovals {
  /** Tools that do not ask again in this conversation (remembered "session" and "always" answers). */
  granted: ReadonlySet<string>;
  /** Set when the turn continues where it paused, with the user's answers. */
  resume?: TurnResume;
}

/** Runs one claimed message as a turn; throws to fail it. */
export type TurnExecutor = (
  message: InboundMessage,
  history: ChatMessage[],
  signal: AbortSignal,
  progress: TurnProgress,
  approvals?: TurnApprovals,
) => Promise<TurnResult>;

/**
 * How a turn that was stopped, not failed, records it as its outcome's `error.type`: "cancelled"
 * by /stop, /new or an erasure, "interrupted" by a newer message (`BUSY_MODE=interrupt`).
 */
export type StopType = "cancelled" | "interrupted";

/**
 * Whether a failed outcome's error is a stop (`StopType`): the one place that tells a stopped run
 * (the runs API's and the inspector's "cancelled", HTTP 409) from a failed one.
 */
export function isStopped(error: { type: string }): error is { type: StopType } {
  return error.type === "cancelled" || error.type === "interrupted";
}

/** The text a chat user gets when their turn failed. */
export function failureNotice(error: { message: string }): string {
  return `Sorry, I could not answer that: ${error.message}.`;
}

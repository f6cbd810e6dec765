// What a session tells the world about its turns: events written into the event outbox in the transaction that makes them true, and the turnEnd hook once that commits; runtime-neutral.
import { callHook, hookContext, type HookOptions } from "../agent/turn_hooks.ts";
import { withContextFields } from "../runtime/mod.ts";
import type { ApprovalRow } from "./approvals.ts";
import type { EventOutboxStore } from "./event_outbox.ts";
import type { EventSender } from "./event_sender.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { InboundMessage, TurnOutcome } from "./types.ts";

/** The event outbox and its sender, where `EVENTS_WEBHOOK_URL` is set. */
export interface EventOutlet {
  store: EventOutboxStore;
  sender: EventSender;
}

/** What the turn events need besides the stores. */
export interface TurnEventsOptions extends HookOptions {
  /** Where events are written; null: none are. */
  outlet: EventOutlet | null;
  now: () => number;
}

/**
 * Listens where a session settles a message and asks an approval question. A message whose turn
 * ran (claimed at least once) gets one `turn.completed` or `turn.failed` (a stopped turn is
 * failed, its error's type `cancelled` or `interrupted`); a scheduled job's occurrence that failed
 * (its turn, or skipped over its creator's quota) gets a `job.failed` too; each question asked,
 * an `approval.requested`. Each row goes in the transaction that settles or asks — never lost,
 * never doubled (`dedup`) — and is posted once that commits. A message dropped from the queue
 * before it ran is no turn: no event, no hook.
 */
export class TurnEvents {
  readonly #stores: SessionStores;
  readonly #options: TurnEventsOptions;

  constructor(stores: SessionStores, options: TurnEventsOptions) {
    this.#stores = stores;
    this.#options = options;
  }

  /** Message `seq` settled with `outcome` in `tx` (`SessionStores.onSettle`). */
  settled(tx: Tx, seq: number, outcome: TurnOutcome): void {
    const { inbox } = this.#stores;
    const ran = (inbox.get(seq)?.attempts ?? 0) > 0;
    const context = inbox.context(seq) ?? {};
    const base = _data(context, seq);
    const outlet = this.#options.outlet;
    if (outlet) {
      const now = this.#options.now();
      let added = false;
      if (ran) {
        added = outcome.status === "completed"
          ? outlet.store.add(tx, `turn:${seq}`, "turn.completed", {
            ...base,
            status: "completed",
            usage: outcome.usage,
          }, now)
          : outlet.store.add(tx, `turn:${seq}`, "turn.failed", {
            ...base,
            status: "failed",
            error: outcome.error,
          }, now);
      }
      if (context.job_id && outcome.status === "failed") {
        const job = { ...base, job_id: context.job_id, error: outcome.error };
        added = outlet.store.add(tx, `job:${seq}`, "job.failed", job, now) || added;
      }
      if (added) tx.onCommit(() => void outlet.sender.flush());
    }
    if (ran && this.#options.hooks?.turnEnd) {
      const event = {
        ...hookContext(context, seq),
        outcome: outcome.status === "completed"
          ? { status: "completed" as const, reply: outcome.reply }
          : { status: "failed" as const, error: outcome.error },
        usage: outcome.status === "completed"
          ? outcome.usage
          : { prompt_tokens: 0, completion_tokens: 0 },
      };
      // After the commit only: a hook never sees an end that rolled back. Not awaited: the
      // session frees up at once; the hook's time box still bounds it.
      tx.onCommit(() =>
        void withContextFields(context, () => callHook(this.#options, "turnEnd", event))
      );
    }
  }

  /** Approval `question` of turn `seq` was asked in `tx` (`ApprovalGateOptions.onAsked`). */
  asked(tx: Tx, seq: number, message: InboundMessage, question: ApprovalRow): void {
    const outlet = this.#options.outlet;
    if (!outlet) return;
    const data = {
      ..._data(message.context, seq),
      call_id: question.callId,
      tool: question.tool,
      arguments: _parsed(question.arguments),
    };
    const dedup = `approval:${seq}:${question.callId}`;
    if (outlet.store.add(tx, dedup, "approval.requested", data, this.#options.now())) {
      tx.onCommit(() => void outlet.sender.flush());
    }
  }

  /** Posts the events an earlier instance left unsent (a restart cut their sending off). */
  flush(): void {
    if (this.#options.outlet?.store.unsent().length) void this.#options.outlet.sender.flush();
  }
}

/** What every event's `data` names: the session, the run (its seq there) and where it came from. */
function _data(context: InboundMessage["context"], seq: number): Record<string, unknown> {
  return {
    session_key: context.session_key ?? "",
    seq,
    platform: context.platform ?? "",
    ...(context.chat_id ? { chat_id: context.chat_id } : {}),
    ...(context.user_id ? { user_id: context.user_id } : {}),
  };
}

/** A call's arguments as an object when they are JSON, else as the text the model wrote. */
function _parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

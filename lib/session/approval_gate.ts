// A turn paused for its user's approval: asking, answering, the deadline, and taking the turn back up; runtime-neutral.
import type { PendingCall, TurnResume } from "../agent/mod.ts";
import { type ApprovalAnswer, approvalQuestionText, approvalStatusText } from "../chat/mod.ts";
import { approvalButtons, approvalCallRef, parseApprovalClick } from "./approval_buttons.ts";
import type { Claim } from "./claim.ts";
import {
  APPROVAL_CHOICES,
  type ApprovalChoice,
  type ApprovalRow,
  type PausedTurn,
} from "./approvals.ts";
import type { OutboxSender } from "./outbox_sender.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { InboundMessage, TurnUsage } from "./types.ts";

/** What the model is told for a call its user denied. */
export const DENIED_RESULT = "the user denied this call; it was not run";
/** What the model is told for a call nobody answered in time (or whose turn was stopped). */
export const UNANSWERED_RESULT = "the user did not approve this call in time; it was not run";
/** What the model is told for an approved call whose run a restart cut off: it is not run twice. */
export const CUT_OFF_RESULT =
  "this call was cut off by a restart after it started; it may or may not have taken effect, and was not run again";

/** What the gate needs besides the stores. */
export interface ApprovalGateOptions {
  /** Sends the question to a chat user; without it only run events ask. */
  sender: OutboxSender | null;
  /** How long a question waits before it counts as denied: chat users, API callers. */
  timeoutMs: { chat: number; api: number };
  /**
   * Told once an answer has committed: the host arms its watchdog, so that a turn whose answer is
   * stored resumes even if the object dies before its drain starts (not only at the deadline).
   */
  onAnswered?: () => void;
  /** Told of each question as it is asked, inside the asking transaction (the session's events). */
  onAsked?: (tx: Tx, seq: number, message: InboundMessage, question: ApprovalRow) => void;
  now: () => number;
}

/** The turn holding the session while it waits, and the question it asks now (null: all answered). */
export interface WaitingTurn {
  pause: PausedTurn;
  message: InboundMessage;
  question: ApprovalRow | null;
}

/** A paused turn taken back up: its renewed claim, its message, where it resumes. */
export interface ResumedTurn {
  claim: Claim;
  message: InboundMessage;
  resume: TurnResume;
}

/**
 * The pause of a turn whose model called a tool that asks. The turn's claim stays held (the
 * session is busy) while no executor runs; its message is `waiting` in the inbox, and its pause
 * and questions are rows of the approval store, so a restart loses nothing.
 */
export class ApprovalGate {
  readonly #stores: SessionStores;
  readonly #options: ApprovalGateOptions;

  constructor(stores: SessionStores, options: ApprovalGateOptions) {
    this.#stores = stores;
    this.#options = options;
  }

  /** The claimed turn when it waits for approval, else null. */
  waiting(): WaitingTurn | null {
    const { seq } = this.#stores.claims.state();
    if (seq === null || this.#stores.inbox.get(seq)?.status !== "waiting") return null;
    const pause = this.#stores.approvals.paused(seq);
    const message = this.#stores.inbox.message(seq);
    if (!pause || !message) return null;
    return { pause, message, question: this.#stores.approvals.pending(seq) };
  }

  /**
   * Pauses claimed turn `seq` (its executor has returned): stores the turn so far and its calls,
   * marks its message waiting, and asks the first question. Inside the claim-guarded transaction.
   */
  pause(
    tx: Tx,
    seq: number,
    message: InboundMessage,
    turn: {
      calls: PendingCall[];
      messages: PausedTurn["messages"];
      step: number;
      usage: TurnUsage;
    },
  ): void {
    const now = this.#options.now();
    const timeout = message.reply ? this.#options.timeoutMs.chat : this.#options.timeoutMs.api;
    this.#stores.approvals.pause(
      tx,
      {
        seq,
        messages: turn.messages,
        step: turn.step,
        usage: turn.usage,
        askedBy: message.context.user_id ?? "",
        deadline: now + timeout,
      },
      turn.calls,
      now,
    );
    this.#stores.inbox.markPaused(tx, seq, true);
    this.#ask(tx, seq, message, now);
    // A caller waiting on an open request learns of the pause, so it can tell its client the run id.
    this.#stores.waiters.paused(tx, seq);
  }

  /**
   * Answers the question the waiting turn asks now. `seq` given (API): only that run's question.
   * `call` given (a button): only while that call (`approvalCallRef`) is the one asked, so a click
   * on an earlier question's buttons never answers a later one. `sender` given (chat): only the
   * user whose message started the turn, or an admin (as the Worker's access check found,
   * `InboundMessage.admin`), may answer.
   */
  answer(
    tx: Tx,
    answer: {
      seq?: number;
      call?: string;
      choice: ApprovalChoice;
      by: string;
      sender?: { userId: string; admin: boolean };
    },
  ): ApprovalAnswer {
    const waiting = this.waiting();
    const question = waiting?.question;
    if (
      !waiting || !question || (answer.seq !== undefined && answer.seq !== waiting.pause.seq) ||
      (answer.call !== undefined && answer.call !== approvalCallRef(question.callId))
    ) return { kind: "not_pending" };
    const { sender } = answer;
    if (
      sender && sender.userId !== waiting.pause.askedBy && !sender.admin
    ) return { kind: "not_yours" };
    const { seq } = waiting.pause;
    const { approvals, events, claims } = this.#stores;
    if (!approvals.answer(tx, seq, question.callId, answer.choice, answer.by)) {
      return { kind: "not_pending" };
    }
    if (answer.choice === "session" || answer.choice === "always") {
      // A chat answer's grant is the answering member's (a chat turn answered over the API: the
      // asking member's), so that in a group one member's "always" never lets another's calls
      // run unasked; an API turn's is everyone's ("").
      const member = sender ? sender.userId : waiting.message.reply ? waiting.pause.askedBy : "";
      approvals.grant(
        tx,
        { tool: question.tool, scope: answer.choice, member },
        claims.state().conversation,
      );
    }
    if (waiting.message.events) {
      events.emit(tx, seq, "approval.responded", {
        call_id: question.callId,
        choice: answer.choice,
        by: answer.by,
      });
    }
    this.#ask(tx, seq, waiting.message, this.#options.now());
    const { onAnswered } = this.#options;
    if (onAnswered) tx.onCommit(onAnswered);
    return { kind: "answered", tool: question.tool, choice: answer.choice };
  }

  /**
   * Answers a click on an approval button (`data`, see `approval_buttons.ts`) by chat user
   * `sender`, exactly as their `/approve` or `/deny` would be, and only while that very question
   * is asked: a click on an earlier question's buttons, or a second click, answers nothing.
   */
  click(tx: Tx, data: string, sender: { userId: string; admin: boolean }): ApprovalAnswer {
    const click = parseApprovalClick(data);
    if (!click) return { kind: "not_pending" };
    const { seq, call, choice } = click;
    return this.answer(tx, { seq, call, choice, by: sender.userId, sender });
  }

  /** Denies every open question of turn `seq` as answered by `by` (its deadline passed, or it was stopped). */
  denyOpen(tx: Tx, seq: number, by: string): void {
    const message = this.#stores.inbox.message(seq);
    for (
      let open = this.#stores.approvals.pending(seq);
      open;
      open = this.#stores.approvals.pending(seq)
    ) {
      this.#stores.approvals.answer(tx, seq, open.callId, "deny", by);
      if (message?.events) {
        this.#stores.events.emit(tx, seq, "approval.responded", {
          call_id: open.callId,
          choice: "deny",
          by,
        });
      }
    }
  }

  /**
   * Denies the waiting turn's open questions once its deadline has passed (it then resumes).
   * Returns the deadline of a turn still waiting for an answer, else null.
   */
  expire(tx: Tx, now: number): number | null {
    const waiting = this.waiting();
    if (!waiting?.question) return null;
    if (now < waiting.pause.deadline) return waiting.pause.deadline;
    this.denyOpen(tx, waiting.pause.seq, "timeout");
    return null;
  }

  /**
   * Takes the waiting turn back up once every question is answered: a new generation of its
   * claim (so nothing older can write), its message running again. Null when nothing is ready.
   */
  resume(tx: Tx): ResumedTurn | null {
    const waiting = this.waiting();
    if (!waiting || waiting.question) return null;
    const { seq } = waiting.pause;
    const claim = this.#stores.claims.renew(tx, this.#options.now());
    if (!claim) return null;
    this.#stores.inbox.markPaused(tx, seq, false);
    const denied = Object.fromEntries(
      this.#stores.approvals.answered(seq).filter((row) => row.choice === "deny").map((row) => [
        row.callId,
        row.answeredBy === "timeout" ? UNANSWERED_RESULT : DENIED_RESULT,
      ]),
    );
    // Calls an earlier resumption ran (it died after): their results stand, none runs twice.
    const results = Object.fromEntries(
      this.#stores.approvals.runs(seq).map((run) => [
        run.callId,
        run.result ?? JSON.stringify({ error: CUT_OFF_RESULT }),
      ]),
    );
    const { messages, step, usage } = waiting.pause;
    const resume = { messages, step, usage, denied, results };
    return { claim, message: waiting.message, resume };
  }

  /** The /status line of a waiting turn, or null. */
  statusLine(now: number): string | null {
    const waiting = this.waiting();
    if (!waiting) return null;
    const askedAt = waiting.pause.deadline - this.#timeoutOf(waiting.message);
    return approvalStatusText(waiting.question, now - askedAt);
  }

  #timeoutOf(message: InboundMessage): number {
    return message.reply ? this.#options.timeoutMs.chat : this.#options.timeoutMs.api;
  }

  /** Asks turn `seq`'s open question, if any: a run event, and a notice to a chat user. */
  #ask(tx: Tx, seq: number, message: InboundMessage, now: number): void {
    const question = this.#stores.approvals.pending(seq);
    if (!question) return;
    this.#options.onAsked?.(tx, seq, message, question);
    if (message.events) {
      this.#stores.events.emit(tx, seq, "approval.request", {
        call_id: question.callId,
        tool: question.tool,
        arguments: _parsed(question.arguments),
        choices: APPROVAL_CHOICES,
      });
    }
    if (message.reply && this.#options.sender) {
      const text = approvalQuestionText(question.tool, question.arguments);
      // Platforms with buttons show the choices under the text too; a click names this call.
      const buttons = approvalButtons(seq, question.callId);
      this.#stores.outbox.add(tx, "notice", seq, message.reply, [text], now, { choices: buttons });
    }
  }
}

/** A call's arguments as an object when they are JSON, else as the text the model wrote. */
function _parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// The chat commands' effects on a session (/status, /stop, /new, …) and the texts they answer with; runtime-neutral.
import {
  approvalAnsweredText,
  compactText,
  contextText,
  forgetText,
  grantsText,
  HELP_TEXT,
  jobsText,
  modelStatusText,
  modelText,
  newConversationText,
  noMemoryText,
  notYourTurnText,
  type ParsedCommand,
  START_TEXT,
  statusText,
  STEER_USAGE,
  stopText,
  unknownCommandText,
} from "../chat/mod.ts";
import { allowedModel, modelChoiceOn, type ModelMenu, turnModelName } from "../agent/mod.ts";
import type { ApprovalGate } from "./approval_gate.ts";
import type { ApprovalChoice } from "./approvals.ts";
import { type GroupStop, mayStopTurn } from "./group_stop.ts";
import type { Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { TurnRunner } from "./turn_runner.ts";
import type { InboundMessage, TurnOutcome } from "./types.ts";
import { type SessionDayUsage, utcDay } from "./session_usage.ts";
import { usageText } from "../chat/usage_text.ts";

/** Answers commands inside `submit`'s transaction; they never take the claim. */
export class CommandRunner {
  readonly #stores: SessionStores;
  readonly #runner: TurnRunner;
  readonly #gate: ApprovalGate;
  readonly #now: () => number;
  readonly #groupStop: GroupStop;
  readonly #models: ModelMenu | undefined;

  constructor(
    stores: SessionStores,
    runner: TurnRunner,
    gate: ApprovalGate,
    now: () => number,
    groupStop: GroupStop = "sender",
    models?: ModelMenu,
  ) {
    this.#stores = stores;
    this.#runner = runner;
    this.#gate = gate;
    this.#now = now;
    this.#groupStop = groupStop;
    this.#models = models;
  }

  /** A command's answer; /stop, /new, /approve, /deny and /forget change state. */
  answer(tx: Tx, { command, word, argument }: ParsedCommand, message: InboundMessage): string {
    switch (command) {
      case "status": {
        const running = this.#runner.current();
        const claim = this.#stores.claims.state();
        const waiting = this.#gate.statusLine(this.#now());
        const state = statusText({
          running: claim.seq !== null,
          runningForMs: running ? this.#now() - running.startedAt : 0,
          step: running?.step ?? 0,
          queued: this.#stores.inbox.waitingCount(),
          ...(waiting ? { waiting } : {}),
        });
        const member = message.context.user_id ?? "";
        const grants = grantsText(this.#stores.approvals.grants(claim.conversation, member));
        const menu = this.#models;
        const model = menu && modelChoiceOn(menu)
          ? modelStatusText(turnModelName({ chosen: this.#stores.model.get() }, menu))
          : "";
        const { compactor } = this.#runner;
        const context = contextText(
          compactor.contextSize(claim.conversation),
          compactor.on ? compactor.limit : null,
        );
        // The model's line stays last (what a reader of /model's effect looks for).
        return [state, grants, context, model].filter(Boolean).join("\n");
      }
      case "approve":
      case "deny": {
        const choice: ApprovalChoice | undefined = command === "deny"
          ? "deny"
          : (["once", "session", "always"] as const).find((c) => c === (argument || "once"));
        if (!choice) return "Usage: /approve, /approve session, /approve always, or /deny";
        const by = message.context.user_id ?? "";
        return approvalAnsweredText(
          this.#gate.answer(tx, {
            choice,
            by,
            sender: { userId: by, admin: message.admin === true },
          }),
        );
      }
      case "memory":
        return noMemoryText(message.group === true);
      case "forget":
        // `/forget`, `/forget all`, `/forget N` are the memory's, answered at the gate where it is on.
        if (argument === "" || argument === "all" || /^#?\d+$/.test(argument)) {
          return noMemoryText(message.group === true);
        }
        return forgetText(
          argument,
          argument === "approvals"
            ? this.#stores.approvals.forgetGrants(tx, message.context.user_id ?? "")
            : 0,
        );
      case "stop":
      case "new":
        if (!this.#mayStop(message)) return notYourTurnText(word);
        return this.#stop(tx, command === "new");
      case "jobs":
        return jobsText(this.#stores.jobs.list());
      case "model":
        return this.#model(tx, argument);
      case "help":
        return HELP_TEXT;
      case "start":
        return START_TEXT;
      case "compact":
        // Queued as a turn of its own (message_admission.ts); never answered here.
        return compactText(0, "nothing");
      case "steer":
        // Only a `/steer` without text is answered: one with text is a message (message_admission.ts).
        return STEER_USAGE;
      case "usage": {
        // A chat's `/usage` is answered at the gate (its user's figures too); here, the session's.
        const day = this.#now();
        const figures = [0, 1].map((back) =>
          this.#stores.usage.day(utcDay(day - back * 86_400_000))
        ) as [SessionDayUsage, SessionDayUsage];
        const priced = figures.some((f) => f.cost > 0);
        return usageText({ session: figures, user: null, priced, userCap: null });
      }
      case "unknown":
        return unknownCommandText(word);
    }
  }

  /**
   * /model's answer: the list (no argument), a switch to an allowed name (remembered for the
   * session's later turns), `default` back to the deployment's, or a refusal; off without MODELS.
   */
  #model(tx: Tx, argument: string): string {
    const menu = this.#models;
    if (!menu || !modelChoiceOn(menu)) {
      return modelText({ kind: "off", current: menu?.default || "the deployment's model" });
    }
    if (!argument) {
      const current = turnModelName({ chosen: this.#stores.model.get() }, menu);
      return modelText({ kind: "list", allowed: menu.allowed, current });
    }
    const model = allowedModel(menu, argument);
    if (!model && argument === "default") {
      this.#stores.model.set(tx, null);
      return modelText({ kind: "switched", model: menu.default, byDefault: true });
    }
    if (!model) return modelText({ kind: "refused", name: argument, allowed: menu.allowed });
    this.#stores.model.set(tx, model);
    return modelText({ kind: "switched", model });
  }

  /** /stop's or /new's answer, once allowed. */
  #stop(tx: Tx, fresh: boolean): string {
    const { stopped, dropped } = this.stopAll(tx, fresh);
    return fresh ? newConversationText(stopped) : stopText(stopped, dropped);
  }

  /** Whether `message`'s /stop or /new may end the turn holding the session (`GROUP_STOP`). */
  #mayStop(message: InboundMessage): boolean {
    const { seq } = this.#stores.claims.state();
    const turnSender = seq === null ? null : this.#stores.inbox.message(seq)?.context.user_id ?? "";
    return mayStopTurn(this.#groupStop, {
      group: message.group === true,
      userId: message.context.user_id ?? "",
      admin: message.admin === true,
    }, turnSender);
  }

  /** Ends the running turn and cancels every waiting message; `fresh` also starts a new conversation. */
  stopAll(tx: Tx, fresh: boolean): { stopped: boolean; dropped: number } {
    const stopped = this.#runner.endCurrent(tx, "cancelled", "stopped");
    const waiting = this.#stores.inbox.waiting();
    for (const seq of waiting) this.#stores.settle(tx, seq, cancelledOutcome("cancelled by /stop"));
    if (fresh) this.#stores.claims.newConversation(tx);
    return { stopped, dropped: waiting.length };
  }
}

/** The outcome of a message stopped before or while it ran. */
export function cancelledOutcome(message: string): TurnOutcome {
  return { status: "failed", error: { message, type: "cancelled" } };
}

// Chat commands (/status, /stop, /new, /reset, /help, /start, /approve, /deny, /forget, /memory): parsing and the texts users see; runtime-neutral.

/** A command baton answers itself, at once, without the model. */
export type SessionCommand =
  | "status"
  | "stop"
  | "new"
  | "help"
  | "start"
  | "approve"
  | "deny"
  | "forget"
  | "jobs"
  | "model"
  | "memory"
  | "compact"
  | "steer"
  | "usage"
  | "unknown";

/** A parsed command: which, the word as typed (lower case), and the rest of the line. */
export interface ParsedCommand {
  command: SessionCommand;
  word: string;
  argument: string;
}

const _KNOWN = [
  "status",
  "stop",
  "new",
  "help",
  "start",
  "approve",
  "deny",
  "forget",
  "jobs",
  "model",
  "memory",
  "compact",
  "steer",
  "usage",
] as const;

/**
 * Every command word users can type: the session's own, `/reset` (an alias of `/new`) and `/pair`
 * (parsed here, answered by the webhook's access gate). docs/reference/commands.md lists the same.
 */
export const COMMAND_WORDS: readonly string[] = [..._KNOWN, "reset", "pair"];

/** The command in `text`, or null when the text is an ordinary message. */
export function parseCommand(text: string): ParsedCommand | null {
  const match = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$/s.exec(text.trim());
  if (!match) return null;
  const word = match[1].toLowerCase();
  const command: SessionCommand = word === "reset"
    ? "new"
    : _KNOWN.find((c) => c === word) ?? "unknown";
  return { command, word, argument: (match[2] ?? "").trim().toLowerCase() };
}

/** A bare "yes" or "no" (while a question is pending it answers it), else null. */
export function parseYesNo(text: string): ParsedCommand | null {
  const word = text.trim().toLowerCase().replace(/[.!]+$/, "");
  if (word === "yes" || word === "y") return { command: "approve", word, argument: "" };
  if (word === "no" || word === "n") return { command: "deny", word, argument: "" };
  return null;
}

/** The reply to /help. */
export const HELP_TEXT = [
  "Commands:",
  "/status — whether I am working on a reply, and how many messages wait",
  "/stop — stop the current reply and drop the waiting messages",
  "/new (or /reset) — stop, then start a fresh conversation",
  "/approve [session|always], /deny — answer the pending approval question",
  "/forget approvals — ask again for every tool approved for the session or always",
  "/memory — what I remember about you across chats; /forget N or /forget all forgets it",
  "/steer <text> — tell me something while I work on a reply: I read it at my next step",
  "/jobs — the tasks scheduled in this chat (ask me to set a reminder)",
  "/model [name] — the model answering here, and which you may switch to",
  "/compact — summarise the conversation so far (later replies see the summary)",
  "/usage — the tokens this chat and you used today and yesterday",
  "/help — this list",
].join("\n");

/** The reply to /jobs: each scheduled task of the session, its schedule and next run. */
export function jobsText(
  jobs: {
    id: number;
    prompt: string;
    status: string;
    schedule: Record<string, unknown>;
    nextRunAt: number | null;
  }[],
): string {
  const live = jobs.filter((job) => job.status !== "done");
  if (!live.length) return "No scheduled tasks. Ask me to remind you of something.";
  return [
    "Scheduled tasks:",
    ...live.map((job) => {
      const when = Object.entries(job.schedule).filter(([k]) => k !== "anchor")
        .map(([k, v]) => `${k} ${v}`).join(", ");
      const next = job.nextRunAt === null ? "" : `, next ${new Date(job.nextRunAt).toISOString()}`;
      const prompt = job.prompt.length > 60 ? `${job.prompt.slice(0, 60)}…` : job.prompt;
      return `#${job.id} ${job.status} (${when}${next}): ${prompt}`;
    }),
  ].join("\n");
}

/**
 * The notice a chat gets when a turn creates a job (`schedule_task`): what runs when, and how to
 * cancel it. baton sends it itself, so a model steered by injected text cannot keep it quiet.
 */
export function jobCreatedText(
  job: {
    id: number;
    prompt: string;
    schedule: Record<string, unknown>;
    next_run_at: string | null;
  },
): string {
  const { schedule } = job;
  const when = typeof schedule.every === "number"
    ? `every ${schedule.every} s`
    : typeof schedule.cron === "string"
    ? `cron ${schedule.cron}${typeof schedule.tz === "string" ? ` ${schedule.tz}` : ""}`
    : `once at ${job.next_run_at ?? schedule.at}`;
  const prompt = job.prompt.length > 200 ? `${job.prompt.slice(0, 200)}…` : job.prompt;
  return [
    `Scheduled task #${job.id} (${when}): ${prompt}`,
    `To cancel it, ask me to cancel task #${job.id}; /jobs lists this chat's tasks.`,
  ].join("\n");
}

/** The reply to /start (Telegram sends it when a chat opens). */
export const START_TEXT = "Hi! Send me a message and I will answer. /help lists the commands.";

/** The short notice a chat user gets when their message has to wait. */
export const QUEUED_NOTICE = "Queued — I'll answer after the current reply.";

/** The notice when a session's queue is full and a message was refused. */
export const QUEUE_FULL_NOTICE =
  "Too many messages are waiting — this one was not processed. Please send it again later.";

/** The answer to a `/steer` without text (one with text is a message: lib/session/steers.ts). */
export const STEER_USAGE =
  "Usage: /steer <text> — I read it while working on the current reply (or next, when idle).";

/** The reply to an unknown /word. */
export function unknownCommandText(word: string): string {
  return `Unknown command /${word}. /help lists the commands.`;
}

/** The reply to /status. */
export function statusText(state: {
  running: boolean;
  runningForMs?: number;
  step?: number;
  queued: number;
  /** Set while the turn waits for approval: what it waits for. */
  waiting?: string;
}): string {
  const waiting = state.queued === 1 ? "1 message waiting" : `${state.queued} messages waiting`;
  if (state.running && state.waiting) return `${state.waiting}; ${waiting}.`;
  if (!state.running) {
    return state.queued ? `Not running; ${waiting}.` : "Idle: nothing running, nothing waiting.";
  }
  const seconds = Math.round((state.runningForMs ?? 0) / 1000);
  const step = state.step ? `step ${state.step}` : "still starting";
  return `Working on a reply for ${seconds} s (${step}); ${waiting}.`;
}

/**
 * The answer to /compact once it ran: how many messages the summary now stands for, or why there
 * was none (`off`: CONTEXT_TOKENS=off; `nothing`: no message since the last summary; `failed`:
 * the model did not write one).
 */
export function compactText(
  compacted: number,
  skipped?: "off" | "nothing" | "failed",
): string {
  if (skipped === "off") return "Compaction is off here.";
  if (skipped === "nothing") return "Nothing to compact: no messages since the last summary.";
  if (skipped === "failed" || !compacted) {
    return "Could not compact now: the model did not write a summary. Try again later.";
  }
  return `Compacted ${compacted} message${compacted === 1 ? "" : "s"} into a summary: ` +
    "later replies see it and the newest messages; the full history is kept.";
}

/** The /status line of the conversation's context size against `CONTEXT_TOKENS` (null: off). */
export function contextText(tokens: number, limit: number | null): string {
  const size = `about ${tokens.toLocaleString("en-US")} tokens`;
  return limit === null
    ? `Context: ${size}.`
    : `Context: ${size} of ${limit.toLocaleString("en-US")} (compacted beyond that; /compact now).`;
}

/** The reply to /stop. */
export function stopText(stopped: boolean, dropped: number): string {
  const dropText = dropped ? ` Dropped ${dropped} waiting message${dropped === 1 ? "" : "s"}.` : "";
  return (stopped ? "Stopped. The session is unlocked." : "Nothing was running.") + dropText;
}

/** The reply to a group member's /stop, /new or /reset of another member's turn (`GROUP_STOP`). */
export function notYourTurnText(word: string): string {
  return `Not yours: only who started the current reply (or an admin) can /${word} it.`;
}

/** The reply to /new and /reset. */
export function newConversationText(stopped: boolean): string {
  return (stopped ? "Stopped the current reply. " : "") + "Started a new conversation.";
}

/** The longest argument summary a question shows. */
const _SUMMARY_CHARS = 200;

/** The question a chat user gets when a tool call waits for their approval. */
export function approvalQuestionText(tool: string, args: string): string {
  const summary = args.length > _SUMMARY_CHARS ? `${args.slice(0, _SUMMARY_CHARS)}…` : args;
  return [
    `Approval needed: ${tool} ${summary}`,
    "Reply /approve (once), /approve session (this conversation), /approve always, or /deny — " +
    "or just yes / no.",
  ].join("\n");
}

/**
 * What an answer to an approval question did, as the session decided it: recorded (the tool and
 * the choice), nothing to answer (none pending, or answered already), or not this sender's.
 */
export type ApprovalAnswer =
  | { kind: "answered"; tool: string; choice: "once" | "session" | "always" | "deny" }
  | { kind: "not_pending" }
  | { kind: "not_yours" };

/**
 * What became of a click on an approval button, typed from the session to the adapter that
 * answers it: the session's `ApprovalAnswer`, or `not_allowed` when the access gate refused the
 * clicker before the session was asked. Adapters decide on `kind` and render with
 * `approvalClickText`; nothing is rendered and read back.
 */
export type ClickAnswer = ApprovalAnswer | { kind: "not_allowed" };

/** The answer to /approve, /deny, yes or no. */
export function approvalAnsweredText(result: ApprovalAnswer): string {
  if (result.kind === "not_pending") return "Nothing is waiting for approval.";
  if (result.kind === "not_yours") {
    return "Not yours: only who asked (or an admin) can answer this.";
  }
  const { tool, choice } = result;
  if (choice === "deny") return `Denied: ${tool} will not run.`;
  if (choice === "session") {
    return `Approved: ${tool} runs now and will not ask again in this conversation.`;
  }
  if (choice === "always") return `Approved: ${tool} runs now and will not ask again here.`;
  return `Approved: ${tool} runs now.`;
}

/** The short answer to a click on an approval button (a Telegram toast, a Discord or Slack ephemeral). */
export function approvalClickText(result: ClickAnswer): string {
  if (result.kind === "not_allowed") return "Not allowed";
  if (result.kind === "not_pending") return "Already answered";
  if (result.kind === "not_yours") return "Not yours: only who asked (or an admin) can answer";
  if (result.choice === "deny") return `Denied: ${result.tool} will not run`;
  if (result.choice === "session") return `Approved for this conversation: ${result.tool}`;
  if (result.choice === "always") return `Approved from now on: ${result.tool}`;
  return `Approved: ${result.tool}`;
}

/** The /status line of a turn waiting for approval (`question` null: answered, resuming). */
export function approvalStatusText(
  question: { tool: string; arguments: string } | null,
  waitedMs: number,
): string {
  if (!question) return "Resuming after an approval.";
  const seconds = Math.max(0, Math.round(waitedMs / 1000));
  return `Waiting ${seconds} s for approval of ${question.tool} ${question.arguments} (/approve or /deny)`;
}

/** The /status line of the remembered approvals, or "" when there are none. */
export function grantsText(grants: { tool: string; scope: "session" | "always" }[]): string {
  if (!grants.length) return "";
  const list = grants.map((g) =>
    `${g.tool} (${g.scope === "always" ? "always" : "this conversation"})`
  );
  return `Approved without asking: ${list.join(", ")}.`;
}

/**
 * The session's answer to `/memory` and to a `/forget` of memory: the Worker answers them at the
 * gate where the chat has a memory (MEMORY on, a direct chat); one that reaches the session has none.
 */
export function noMemoryText(group: boolean): string {
  return group
    ? "Memory is kept in direct chats only: send /memory to me directly."
    : "Memory is not available here.";
}

/** The answer to /forget. */
export function forgetText(argument: string, forgotten: number): string {
  if (argument !== "approvals") {
    return "Usage: /forget all, /forget N (see /memory), /forget approvals";
  }
  return forgotten
    ? `Forgot ${forgotten} approval${forgotten === 1 ? "" : "s"}: those tools ask again.`
    : "No approvals to forget.";
}

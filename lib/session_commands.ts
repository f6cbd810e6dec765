// Chat commands (/status, /stop, /new, /reset, /help, /start): parsing and the texts users see; runtime-neutral.

/** A command baton answers itself, at once, without the model. */
export type SessionCommand = "status" | "stop" | "new" | "help" | "start" | "unknown";

/** The command in `text`, or null when the text is an ordinary message. */
export function parseCommand(text: string): { command: SessionCommand; word: string } | null {
  const match = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s|$)/.exec(text.trim());
  if (!match) return null;
  const word = match[1].toLowerCase();
  const command: SessionCommand = word === "reset"
    ? "new"
    : (["status", "stop", "new", "help", "start"] as const).find((c) => c === word) ?? "unknown";
  return { command, word };
}

/** The reply to /help. */
export const HELP_TEXT = [
  "Commands:",
  "/status — whether I am working on a reply, and how many messages wait",
  "/stop — stop the current reply and drop the waiting messages",
  "/new (or /reset) — stop, then start a fresh conversation",
  "/help — this list",
].join("\n");

/** The reply to /start (Telegram sends it when a chat opens). */
export const START_TEXT = "Hi! Send me a message and I will answer. /help lists the commands.";

/** The short notice a chat user gets when their message has to wait. */
export const QUEUED_NOTICE = "Queued — I'll answer after the current reply.";

/** The notice when a session's queue is full and a message was refused. */
export const QUEUE_FULL_NOTICE =
  "Too many messages are waiting — this one was not processed. Please send it again later.";

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
}): string {
  const waiting = state.queued === 1 ? "1 message waiting" : `${state.queued} messages waiting`;
  if (!state.running) {
    return state.queued ? `Not running; ${waiting}.` : "Idle: nothing running, nothing waiting.";
  }
  const seconds = Math.round((state.runningForMs ?? 0) / 1000);
  const step = state.step ? `step ${state.step}` : "still starting";
  return `Working on a reply for ${seconds} s (${step}); ${waiting}.`;
}

/** The reply to /stop. */
export function stopText(stopped: boolean, dropped: number): string {
  const dropText = dropped ? ` Dropped ${dropped} waiting message${dropped === 1 ? "" : "s"}.` : "";
  return (stopped ? "Stopped. The session is unlocked." : "Nothing was running.") + dropText;
}

/** The reply to /new and /reset. */
export function newConversationText(stopped: boolean): string {
  return (stopped ? "Stopped the current reply. " : "") + "Started a new conversation.";
}

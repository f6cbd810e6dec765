// Approvals by mail: the line an approval question mail adds, and a reply's "approve" / "deny" read as the session's command; runtime-neutral.

/**
 * What an approval question mail adds below the question: mail has no buttons, and a reply's
 * first line is what the sender controls best (the rest is quoted history baton cuts anyway).
 */
export const MAIL_APPROVAL_HINT =
  "By mail: reply with approve (once), approve session, approve always, or deny as the first line.";

// The first line of a reply that answers a question: a word, maybe a scope, maybe a full stop.
const _ANSWER = /^(approve(?:\s+(?:session|always))?|deny)[.!]*$/i;

/**
 * The command a reply's new text is when it answers baton's approval question: its first line
 * `approve`, `approve session`, `approve always` or `deny` (any case, a trailing full stop
 * allowed; whatever follows is ignored) becomes `/approve …` or `/deny`, which the session answers
 * as in any chat. Only a reply to one of baton's own mails (`answersBaton`) is read so: a new mail
 * that happens to start with "Approve" is an ordinary message. Else the text as it is.
 */
export function mailCommandText(text: string, answersBaton: boolean): string {
  if (!answersBaton) return text;
  const first = text.trim().split("\n", 1)[0].trim().replace(/\s+/g, " ");
  const match = _ANSWER.exec(first);
  return match ? `/${match[1].toLowerCase()}` : text;
}

// One session per mail thread: the thread a mail belongs to, its session key, and the Message-ID of baton's replies, which names the thread again; runtime-neutral.
import { encodeHex } from "../runtime/mod.ts";
import type { InboundMail } from "./inbound_mail.ts";

/** Where a mail's thread is decided, and what it is: 16 hex characters. */
export interface MailThread {
  /** The thread's name: a hash of its first message's id (or, without ids, of sender and subject). */
  thread: string;
  /** The session of this sender in this thread: `email:<address>:<thread>`. */
  sessionKey: string;
}

/** The Message-ID shape of baton's replies: `<baton.<thread>.<tag>.<outbox marker>@<domain>>`. */
const _OURS = /^<baton\.([0-9a-f]{16})\.[0-9a-f]{8}\.[A-Za-z0-9-]{1,40}@[^<>\s]+>$/;

/**
 * The thread of `mail`, and its sender's session in it. A reply to one of baton's mails is in that
 * mail's thread (its Message-ID names it); else the thread starts at the first `References` id
 * (the thread's first message), else at `In-Reply-To`, else at the mail's own `Message-ID` (a new
 * thread). A mail with none of them: the sender and the subject without its `Re:`/`Fwd:`.
 */
export async function mailThread(mail: InboundMail): Promise<MailThread> {
  const ids = [...mail.inReplyTo, ...mail.references];
  let thread = ids.map((id) => _OURS.exec(id)?.[1]).find((t) => t !== undefined);
  if (!thread) {
    const root = mail.references[0] ?? mail.inReplyTo[0] ?? mail.messageId ??
      `subject:${mail.from}:${normalizedSubject(mail.subject)}`;
    thread = (await _sha256Hex(root)).slice(0, 16);
  }
  return { thread, sessionKey: `email:${mail.from}:${thread}` };
}

/** Whether `id` is the Message-ID of a mail baton sent (see `outgoingMessageId`). */
export function isBatonMessageId(id: string): boolean {
  return _OURS.test(id);
}

/** The subject without its reply and forward prefixes (`Re:`, `Fwd:`, `AW:`, `[tags]`…), lower-cased. */
export function normalizedSubject(subject: string): string {
  let s = subject.trim();
  for (let before = ""; before !== s;) {
    before = s;
    s = s.replace(/^(re|fw|fwd|aw|sv|wg)\s*(\[\d+\])?\s*:\s*/i, "").replace(/^\[[^\]]*\]\s*/, "");
  }
  return s.replace(/\s+/g, " ").toLowerCase();
}

/** A reply's subject: the mail's, behind one `Re: ` (none added twice). */
export function replySubject(subject: string): string {
  const s = subject.trim();
  return /^re\s*:/i.test(s) ? s : `Re: ${s || "(no subject)"}`;
}

/** The 8-hex tag of a session key, so that two senders' replies in one thread never share an id. */
export async function sessionTag(sessionKey: string): Promise<string> {
  return (await _sha256Hex(sessionKey)).slice(0, 8);
}

/**
 * The Message-ID of a mail baton sends: made of the thread, the session's tag and the outbox
 * row's marker (its id and creation time), so it is fixed once the row is written, the same on
 * every resend of it (a receiver shows one), and a reply to it finds its thread again.
 */
export function outgoingMessageId(
  target: { thread: string; tag: string; from: string },
  marker: string,
): string {
  const domain = target.from.slice(target.from.lastIndexOf("@") + 1);
  return `<baton.${target.thread}.${target.tag}.${marker}@${domain}>`;
}

async function _sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return encodeHex(new Uint8Array(digest));
}

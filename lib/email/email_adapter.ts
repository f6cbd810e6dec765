// The email platform: an inbound mail made a complete chat event, and the adapter that sends replies and notices as threaded mails through the outbox; runtime-neutral.
import * as z from "zod";
import {
  type PartSend,
  PayloadError,
  type PlatformAdapter,
  type PlatformEnv,
  type PlatformMessage,
  type SendResult,
} from "../chat/mod.ts";
import { errorText } from "../runtime/mod.ts";
import { platformEvent } from "../platforms/_platform_event.ts";
import type { MediaStore } from "../media/mod.ts";
import type { InboundMail } from "./inbound_mail.ts";
import { fetchStagedAttachment } from "./mail_attachments.ts";
import { MAIL_APPROVAL_HINT, mailCommandText } from "./mail_commands.ts";
import { newText } from "./new_text.ts";
import { replyMime } from "./reply_mime.ts";
import {
  isBatonMessageId,
  mailThread,
  outgoingMessageId,
  replySubject,
  sessionTag,
} from "./thread.ts";

/** How many ids a reply's `References` keeps: the thread's first, and the newest ones. */
const _MAX_REFERENCES = 20;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _address = z.lazy(() => z.string().min(3).max(254).regex(/^[^\s@<>]+@[^\s@<>]+$/));
const _id = z.lazy(() => z.string().max(252).regex(/^<[^<>\s]+>$/));

/** Where an email reply goes: from baton's address to the sender, in the sender's thread. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("email"),
    from: _address,
    to: _address,
    subject: z.string().max(998),
    /** The mail answered (`In-Reply-To`), and the thread's ids after it (`References`). */
    in_reply_to: _id,
    references: z.array(_id).max(_MAX_REFERENCES + 1),
    /** The thread's and the session's names, which every outgoing Message-ID carries. */
    thread: z.string().regex(/^[0-9a-f]{16}$/),
    tag: z.string().regex(/^[0-9a-f]{8}$/),
  })
);

/** An email reply target, as stored with the message. */
export type EmailTarget = z.infer<typeof _target>;

/** One mail to hand to the `send_email` binding: envelope addresses and the raw RFC 5322 text. */
export interface RawMail {
  from: string;
  to: string;
  raw: string;
}

/**
 * Sends a raw mail (the Worker's `EMAIL_OUT` binding: functions/ makes the `EmailMessage`,
 * which only the Workers runtime has). Throws when the mail was not accepted.
 */
export type MailPost = (env: PlatformEnv, mail: RawMail) => Promise<void>;

/**
 * The complete chat event of an inbound mail that passed the mail checks: its sender's session
 * in its thread, the Message-ID as the delivery key (a mail delivered twice runs once), the new
 * text only (quoted history and signature cut), and the reply target that threads the answer.
 * A reply to one of baton's mails whose first line is `approve` or `deny` is that command
 * (`mailCommandText`). Null when no new text and no attachment is left (an empty mail, or one
 * that only quotes); the attachments are not on the event: the mail's handler keeps them in
 * `MEDIA` once the mail is let in (./mail_attachments.ts).
 */
export async function emailMessage(
  mail: InboundMail,
  env: PlatformEnv,
): Promise<PlatformMessage<EmailTarget> | null> {
  const written = newText(mail.text);
  // Attachments alone are a message (a photo sent without a word), as a captionless photo is.
  if (!written && !mail.attachments.length) return null;
  const text = mailCommandText(written, mail.inReplyTo.some(isBatonMessageId));
  const { thread, sessionKey } = await mailThread(mail);
  const replyFrom = (env.EMAIL_FROM ?? "").trim() || mail.to;
  // Without a Message-ID (rare: Email Routing adds one) the mail itself names the delivery.
  const id = mail.messageId ?? `<${await _digest(mail)}@baton.invalid>`;
  const references = [...mail.references, ...mail.inReplyTo, id].filter((r, i, all) =>
    all.indexOf(r) === i
  );
  // The thread's first id, then the newest: RFC 5322's advice for a long thread.
  const kept = references.length > _MAX_REFERENCES
    ? [references[0], ...references.slice(-(_MAX_REFERENCES - 1))]
    : references;
  return platformEvent("email", {
    sessionKey,
    deliveryKey: `email:${id}`,
    text,
    context: {
      chat_id: mail.from,
      chat_name: mail.subject,
      thread_id: thread,
      user_id: mail.from,
      user_name: mail.name,
      message_id: id,
    },
    reply: {
      platform: "email",
      from: replyFrom,
      to: mail.from,
      subject: replySubject(mail.subject),
      in_reply_to: id,
      references: kept,
      thread,
      tag: await sessionTag(sessionKey),
    },
    // A mail is between one person and baton: codes and notices go back to them alone.
    sender: { user: mail.from, name: mail.name, direct: true },
  });
}

/**
 * The email adapter over `post`: each reply or notice one mail (`Re:` subject, `In-Reply-To`,
 * `References`, a Message-ID fixed by its outbox row), never split; a question's choices become
 * a line saying what to reply. A send cut off (a kill, or the binding throwing) leaves the part in
 * doubt: resent once behind the note with the same Message-ID. Mail arrives through the
 * Worker's `email()` handler (functions/email_route.ts), never as a webhook: `verify` and `parse`
 * refuse, and the adapter is not in the webhook table. `media` is the deployment's `MEDIA`
 * store, which a mail's attachments are read back from inside the turn.
 */
export function emailAdapter(
  post: MailPost,
  media?: (env: PlatformEnv) => MediaStore | undefined,
): PlatformAdapter<EmailTarget> {
  return {
    name: "email",
    requiredEnv: [],
    // A mail has no length limit worth splitting at: one reply, one mail.
    maxMessageChars: 10_000_000,
    asyncDelivery: false,
    replyTarget: _target,
    verify: () => Promise.resolve("email arrives through Email Routing, not a webhook"),
    parse: () => {
      throw new PayloadError("email arrives through Email Routing, not a webhook");
    },
    send: (target, text, part, env) => _send(post, target, text, part, env),
    // A mail's attachments, kept in `media` when the mail came in (stageMailAttachments).
    fetchMedia: (item, env, options) => fetchStagedAttachment(item, media?.(env), options.maxBytes),
  };
}

async function _send(
  post: MailPost,
  target: EmailTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const marker = part.marker ?? crypto.randomUUID();
  // A notice that asks (an approval question) has no buttons by mail: the answer is a reply.
  const body = part.choices?.length ? `${text}\n\n${MAIL_APPROVAL_HINT}` : text;
  const raw = replyMime({
    from: target.from,
    to: target.to,
    subject: target.subject,
    messageId: outgoingMessageId(target, marker),
    inReplyTo: target.in_reply_to,
    references: target.references,
    text: body,
    date: new Date(),
  });
  part.leaving?.();
  try {
    await post(env, { from: target.from, to: target.to, raw });
    return { ok: true };
  } catch (error) {
    // The binding says little: whether the mail left is unknown, so the part is in doubt, as
    // after a kill mid-send. It goes again behind RESEND_NOTE (or not, REPLY_IN_DOUBT=skip) with
    // the same Message-ID: a mailbox that drops a repeated Message-ID shows one; any other shows
    // the repeat marked as one.
    return {
      ok: false,
      status: 0,
      retryable: false,
      uncertain: true,
      message: `send_email refused the mail: ${errorText(error)}`,
    };
  }
}

async function _digest(mail: InboundMail): Promise<string> {
  const text = JSON.stringify([mail.from, mail.subject, mail.headers.length, mail.text]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

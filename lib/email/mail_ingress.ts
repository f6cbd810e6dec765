// What baton does with one inbound mail: refuse it (unreadable, unauthenticated), drop it unanswered (a robot's, a domain not read), or take it as a chat event; runtime-neutral.
import type { PlatformEnv, PlatformMessage } from "../chat/mod.ts";
import { listSetting, switchSetting } from "../deployment/setting_values.ts";
import { emailMessage, type EmailTarget } from "./email_adapter.ts";
import { MailError, readMail } from "./inbound_mail.ts";
import type { MailAttachment } from "./mail_attachments.ts";
import { authProblem, automatedReason } from "./mail_policy.ts";

/** The decision on one mail. */
export type MailIngress =
  /** Refused back to the sending server (SMTP 5xx, `setReject`): nothing stored, no turn. */
  | { kind: "reject"; reason: string }
  /** Accepted and dropped: never answered (a bounce, an auto-reply, a list, a domain not read). */
  | { kind: "drop"; reason: string }
  /** A person's mail: gate it, then its session (as a webhook's message). */
  | { kind: "message"; message: PlatformMessage<EmailTarget>; attachments: MailAttachment[] };

/**
 * Reads `raw`, sent from `envelope.from` to `envelope.to`, and decides: unreadable mail and
 * (with `EMAIL_REQUIRE_AUTH`, default on) unauthenticated mail is rejected; mail written by a
 * machine, mail from a domain outside `EMAIL_ALLOWED_DOMAINS` and mail with no new text are
 * dropped unanswered; the rest is a complete chat event, with the attachments the handler stores
 * once the sender is let in (./mail_attachments.ts).
 */
export async function mailIngress(
  raw: Uint8Array,
  envelope: { from: string; to: string },
  env: PlatformEnv,
): Promise<MailIngress> {
  let mail;
  try {
    mail = await readMail(raw, envelope);
  } catch (error) {
    if (error instanceof MailError) return { kind: "reject", reason: error.message };
    throw error;
  }
  // A robot's mail is never answered, not even with a refusal: checked first.
  const automated = automatedReason(mail);
  if (automated) return { kind: "drop", reason: automated };
  if (switchSetting(env, "EMAIL_REQUIRE_AUTH")) {
    const problem = authProblem(mail);
    if (problem) return { kind: "reject", reason: `sender not authenticated: ${problem}` };
  }
  const domains = listSetting(env, "EMAIL_ALLOWED_DOMAINS").map((d) => d.toLowerCase());
  const domain = mail.from.slice(mail.from.lastIndexOf("@") + 1);
  if (domains.length && !domains.includes(domain)) {
    return { kind: "drop", reason: "sender's domain not in EMAIL_ALLOWED_DOMAINS" };
  }
  const message = await emailMessage(mail, env);
  if (!message) return { kind: "drop", reason: "no new text" };
  return { kind: "message", message, attachments: mail.attachments };
}

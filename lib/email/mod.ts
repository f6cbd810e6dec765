// Email as a way in: inbound mail read, judged and threaded into one session per thread, and the adapter that answers by mail; runtime-neutral.
export { emailAdapter, emailMessage, type EmailTarget } from "./email_adapter.ts";
export type { MailPost, RawMail } from "./email_adapter.ts";
export {
  type InboundMail,
  MailError,
  MAX_MAIL_BYTES,
  messageIds,
  readMail,
} from "./inbound_mail.ts";
export { type MailIngress, mailIngress } from "./mail_ingress.ts";
export {
  fetchStagedAttachment,
  type MailAttachment,
  MAX_MAIL_ATTACHMENTS,
  stageMailAttachments,
} from "./mail_attachments.ts";
export { authProblem, automatedReason } from "./mail_policy.ts";
export { MAIL_APPROVAL_HINT, mailCommandText } from "./mail_commands.ts";
export { newText } from "./new_text.ts";
export { encodedWord, htmlBody, type OutgoingMail, replyMime } from "./reply_mime.ts";
export {
  isBatonMessageId,
  mailThread,
  normalizedSubject,
  outgoingMessageId,
  replySubject,
  sessionTag,
} from "./thread.ts";

// Hands a raw mail to the Worker's `EMAIL_OUT` send_email binding as an `EmailMessage`; Workers (cloudflare:email).
import { EmailMessage } from "cloudflare:email";
import type { MailPost } from "../lib/email/mod.ts";

/**
 * Sends through `env.EMAIL_OUT` (wrangler.toml `[[send_email]]`). Throws when the binding is
 * missing or refuses the mail (an unverified destination, a sender not on Email Routing).
 */
export const sendEmailPost: MailPost = async (env, mail) => {
  const binding = (env as unknown as { EMAIL_OUT?: SendEmail }).EMAIL_OUT;
  if (!binding) throw new Error("the EMAIL_OUT send_email binding is not configured");
  await binding.send(new EmailMessage(mail.from, mail.to, mail.raw));
};

// Every adapter a session's replies and notices may go out through: the webhook platforms and email; Workers (cloudflare:email).
import type { PlatformAdapter } from "../lib/chat/mod.ts";
import { emailAdapter } from "../lib/email/mod.ts";
import { PLATFORM_ADAPTERS } from "../lib/platforms/mod.ts";
import { sendEmailPost } from "./_email_post.ts";

/** The email adapter, sending through the `EMAIL_OUT` binding. */
export const EMAIL_ADAPTER = emailAdapter(sendEmailPost);

/**
 * The reply table of the session and access objects: every webhook platform, and email (which
 * arrives through the `email()` handler, not a webhook, so it is not in `PLATFORM_ADAPTERS`).
 */
export const CHAT_ADAPTERS: readonly PlatformAdapter[] = [
  ...PLATFORM_ADAPTERS,
  EMAIL_ADAPTER,
];

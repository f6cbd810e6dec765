// Every adapter a session's replies and notices may go out through: the webhook platforms and email; Workers (cloudflare:email).
import type { PlatformAdapter } from "../lib/chat/mod.ts";
import { emailAdapter } from "../lib/email/mod.ts";
import { platformAdapters } from "../lib/platforms/mod.ts";
import { sendEmailPost } from "./_email_post.ts";
import type { Env } from "./env.ts";
import { r2MediaStore } from "./r2_media_store.ts";

/** The email adapter, sending through the `EMAIL_OUT` binding, reading attachments back from `MEDIA`. */
export const EMAIL_ADAPTER = emailAdapter(sendEmailPost, (env) => {
  const bucket = (env as unknown as Env).MEDIA;
  return bucket ? r2MediaStore(bucket) : undefined;
});

/**
 * The reply table of the session and access objects: every webhook platform, and email (which
 * arrives through the `email()` handler, not a webhook, so it is not in `PLATFORMS`). Loaded by
 * each object's constructor (`ctx.blockConcurrencyWhile`), so that start-up evaluates none.
 */
export async function chatAdapters(): Promise<readonly PlatformAdapter[]> {
  return [...await platformAdapters(), EMAIL_ADAPTER];
}

// The events sink for EVENTS_WEBHOOK_URL: a stored event posted as a Standard Webhooks delivery (signed beside standard_webhooks.ts's verification); runtime-neutral (fetch, Web Crypto).
import type { SendResult } from "../chat/mod.ts";
import { sendRequest } from "./_kit.ts";
import { signStandardWebhook } from "./standard_webhooks.ts";

/** Where the events go and the `whsec_…` secret they are signed with. */
export interface EventsWebhookOptions {
  url: string;
  secret: string;
  /** How long one post may take before it counts as no answer (retried); default 10 s. */
  timeoutMs?: number;
}

/**
 * Posts each event as `{type, timestamp, data}` JSON with `webhook-id` (the event's own, the same
 * on every retry), `webhook-timestamp` (this attempt's) and `webhook-signature` (`v1,<base64>`
 * HMAC-SHA256 of `id.timestamp.body`). A 2xx is delivered; a 429, a 5xx or no answer is
 * retryable (the receiver dedups by `webhook-id`, so a repeat is harmless); any other answer is
 * final. Neither the URL nor the secret reaches a message. Shaped as lib/session's `EventSink`.
 */
export function eventsWebhookSink(
  options: EventsWebhookOptions,
): { post(event: { webhookId: string; body: string }): Promise<SendResult> } {
  return {
    async post(event) {
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = await signStandardWebhook({
        secret: options.secret,
        id: event.webhookId,
        timestamp,
        body: event.body,
      });
      return await sendRequest(options.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": event.webhookId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        },
        body: event.body,
      }, {
        api: "events webhook",
        leaving: undefined,
        secrets: [options.url, options.secret],
        idempotent: true,
        timeoutMs: options.timeoutMs ?? 10_000,
      });
    },
  };
}

// Signed inbound webhooks: the generic Standard Webhooks route; Workers.
import { Hono } from "hono";
import { z } from "zod";
import { readConfig } from "../lib/config.ts";
import { SESSION_ID } from "../lib/openai_api.ts";
import { withSessionContext } from "../lib/session_context.ts";
import type { InboundMessage } from "../lib/session_sentinel.ts";
import { verifyStandardWebhook } from "../lib/standard_webhooks.ts";
import { type App, awaitOutcome, jsonError, parseJson, submitMessage } from "./_http.ts";

const _genericBody = z.object({
  session: z.string().regex(SESSION_ID, "1-128 characters of [A-Za-z0-9._:-]"),
  text: z.string().min(1).max(100_000),
  user: z.string().max(256).optional(),
});

/** Routes under /webhooks. */
export const webhookRoutes = new Hono<App>();

webhookRoutes.post("/generic", async (c) => {
  const config = readConfig(c.env as unknown as Record<string, unknown>);
  if (!config.webhookSecret) {
    return jsonError(
      c,
      403,
      "the generic webhook is disabled: set WEBHOOK_SECRET (wrangler secret put WEBHOOK_SECRET)",
      "not_configured",
    );
  }
  const body = new Uint8Array(await c.req.arrayBuffer());
  const verified = await verifyStandardWebhook({
    secret: config.webhookSecret,
    headers: c.req.raw.headers,
    body,
  });
  if (!verified.ok) return jsonError(c, 401, verified.message, "invalid_signature");
  const payload = parseJson(_genericBody, body);
  const sessionKey = `webhook:${payload.session}`;
  const message: InboundMessage = {
    text: payload.text,
    deliveryKey: verified.id,
    context: {
      platform: "webhook",
      chat_id: payload.session,
      user_id: payload.user ?? "",
      user_name: payload.user ?? "",
      session_key: sessionKey,
      message_id: verified.id,
    },
  };
  return withSessionContext(message.context, config.contextDefaults, async () => {
    const receipt = await submitMessage(c.env, sessionKey, message);
    const outcome = await awaitOutcome(c.env, message, receipt.seq);
    if (outcome.status === "failed") {
      return c.json({ session: payload.session, error: outcome.error }, 502);
    }
    return c.json({ session: payload.session, reply: outcome.reply });
  });
});

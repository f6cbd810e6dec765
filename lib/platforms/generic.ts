// The generic webhook as an adapter: Standard Webhooks signatures, `{session, text, user?}` deliveries answered with the turn's outcome; runtime-neutral.
import { z } from "zod";
import { parsePayload } from "../runtime/mod.ts";
import { sessionIdField } from "../openai/mod.ts";
import type { Ingress, PlatformAdapter, ReplyTarget } from "../chat/mod.ts";
import { verifyStandardWebhook } from "./standard_webhooks.ts";

const _body = z.object({
  session: sessionIdField,
  text: z.string().min(1).max(100_000),
  user: z.string().max(256).optional(),
});

/** The generic webhook never sends: its answer is the delivery's response. */
type _NoTarget = ReplyTarget & { platform: "generic" };

/**
 * `POST /webhooks/generic`: a Standard Webhooks delivery (`WEBHOOK_SECRET`, `whsec_<base64>`)
 * of `{session, text, user?}`, run in session `webhook:<session>` and answered with its outcome
 * (`{session, reply}`, or `{session, error}` with the failure's status). Trusted by its signature,
 * unless `ALLOWED_USERS` names generic users (`generic:<user>`): then only those, others 403.
 */
export const genericAdapter: PlatformAdapter<_NoTarget> = {
  name: "generic",
  requiredEnv: ["WEBHOOK_SECRET"],
  maxMessageChars: 100_000,
  asyncDelivery: false,
  replyTarget: z.object({ platform: z.literal("generic") }),
  async verify(request, env) {
    const verified = await verifyStandardWebhook({
      secret: env.WEBHOOK_SECRET ?? "",
      headers: request.headers,
      body: request.body,
      nowSeconds: request.nowSeconds,
    });
    return verified.ok ? null : verified.message;
  },
  parse(request): Ingress<_NoTarget> {
    const payload = parsePayload(_body, request.body);
    // Verified: the signed webhook-id is there.
    const id = request.headers.get("webhook-id") ?? "";
    const sessionKey = `webhook:${payload.session}`;
    const user = payload.user ?? "";
    return {
      kind: "run",
      message: {
        sessionKey,
        deliveryKey: id,
        text: payload.text,
        context: {
          platform: "webhook",
          chat_id: payload.session,
          user_id: user,
          user_name: user,
          session_key: sessionKey,
          message_id: id,
        },
        // The caller's own session, shared with nobody: no group rules (GROUP_STOP), no notices.
        sender: { platform: "generic", user, name: "", direct: true },
      },
      echo: { session: payload.session },
    };
  },
  send: () =>
    Promise.resolve({
      ok: false,
      status: 400,
      retryable: false,
      message: "the generic webhook answers in its response; nothing is sent",
    }),
};

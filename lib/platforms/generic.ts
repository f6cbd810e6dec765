// The generic webhook as an adapter: Standard Webhooks signatures, `{session, text, user?, attachments?}` deliveries answered with the turn's outcome; runtime-neutral.
import * as z from "zod";
import { parsePayload } from "../runtime/mod.ts";
import { sessionIdField } from "../openai/mod.ts";
import type { Ingress, PlatformAdapter, ReplyTarget } from "../chat/mod.ts";
import { verifyStandardWebhook } from "./standard_webhooks.ts";
import { downloadMedia, type MediaPart, type PlatformMedia } from "../media/mod.ts";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
/** An attachment: a link fetched inside the turn, or the file's bytes in base64. */
const _attachment = z.lazy(() =>
  z.object({
    name: z.string().max(256).optional(),
    type: z.string().max(128).optional(),
    url: z.url({ protocol: /^https$/ }).max(4096).optional(),
    data: z.string().min(1).optional(),
  }).refine((a) => (a.url === undefined) !== (a.data === undefined), {
    message: "an attachment has exactly one of `url` (https) and `data` (base64)",
  })
);

const _body = z.lazy(() =>
  z.object({
    session: sessionIdField,
    text: z.string().max(100_000).default(""),
    user: z.string().max(256).optional(),
    attachments: z.array(_attachment).max(10).optional(),
  }).refine((b) => b.text !== "" || (b.attachments?.length ?? 0) > 0, {
    message: "`text` must not be empty without attachments",
    path: ["text"],
  })
);

/** The generic webhook never sends: its answer is the delivery's response. */
type _NoTarget = ReplyTarget & { platform: "generic" };

/**
 * `POST /webhooks/generic`: a Standard Webhooks delivery (`WEBHOOK_SECRET`, `whsec_<base64>`)
 * of `{session, text, user?, attachments?}` (`attachments: [{name?, type?, url | data}]`: an https
 * link fetched inside the turn, or base64 `data` stored before the message), run in session `webhook:<session>` and answered with its outcome
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
    const attachments = payload.attachments ?? [];
    // Links are fetched inside the turn (`fetchMedia`); inline data is stored by the route first.
    const media: PlatformMedia[] = attachments.flatMap((a) =>
      a.url
        ? [{
          platform: "generic",
          file: a.url,
          kind: "document" as const,
          ...(a.name ? { name: a.name } : {}),
          ...(a.type ? { type: a.type } : {}),
        }]
        : []
    );
    const files: MediaPart[] = attachments.flatMap((a, i) =>
      a.data
        ? [{
          path: `attachments[${i}]`,
          url: `data:${a.type ?? "application/octet-stream"};base64,${a.data}`,
          kind: "file" as const,
          ...(a.name ? { name: a.name } : {}),
        }]
        : []
    );
    return {
      kind: "run",
      ...(files.length ? { files } : {}),
      message: {
        sessionKey,
        deliveryKey: id,
        text: payload.text,
        ...(media.length ? { media } : {}),
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
  fetchMedia: (item, _env, options) =>
    downloadMedia(item.file, {}, { api: "attachment's server", ...options }),
  send: () =>
    Promise.resolve({
      ok: false,
      status: 400,
      retryable: false,
      message: "the generic webhook answers in its response; nothing is sent",
    }),
};

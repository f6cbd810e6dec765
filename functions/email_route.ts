// The Worker's email() handler: a mail from Email Routing read, judged, gated and stored as its thread's session's message, the way a webhook's message is; Workers.
import { Hono } from "hono";
import type { Deployment } from "../lib/deployment/mod.ts";
import type { PlatformEnv } from "../lib/chat/mod.ts";
import { mailIngress, MAX_MAIL_BYTES, stageMailAttachments } from "../lib/email/mod.ts";
import { chatInbound } from "../lib/platforms/chat_inbound.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { EMAIL_ADAPTER } from "./_chat_adapters.ts";
import { gateMessage } from "./_access_gate.ts";
import { type App, entryBinding, jsonError, RequestError } from "./_http.ts";
import { messageDropped } from "./_message_hook.ts";
import type { Env } from "./env.ts";
import { r2MediaStore } from "./r2_media_store.ts";
import { submitMessage } from "./session_client.ts";

/** The Worker's `email` handler of one deployment (its hooks, its config). */
export type EmailHandler = (
  message: ForwardableEmailMessage,
  env: Env,
  ctx: ExecutionContext,
) => Promise<void>;

/**
 * Makes the `email()` handler: the mail is read in full, then judged inside an app of its own that
 * is never routed from outside (the access gate and the session client are written against a
 * request's context). A mail refused (unreadable, unauthenticated) is rejected back to the sending
 * server; one dropped (a robot's, a sender refused access) is accepted and left unanswered but for
 * the access notice; a person's mail is stored in its session before the handler returns. A
 * failure to store it throws: Email Routing then reports a temporary failure, and the sender's
 * server tries again (the Message-ID keeps it to one turn).
 */
export function emailHandler(deployment: Deployment): EmailHandler {
  const app = _emailApp(deployment);
  return async (message, env, ctx) => {
    if (message.rawSize > MAX_MAIL_BYTES) {
      await _reject(message, `message over ${MAX_MAIL_BYTES} bytes`);
      return;
    }
    const raw = new Uint8Array(await new Response(message.raw).arrayBuffer());
    const request = new Request("https://email.internal/", {
      method: "POST",
      headers: { "x-envelope-from": message.from, "x-envelope-to": message.to },
      body: raw,
    });
    const response = await app.fetch(request, env, ctx);
    if (response.status >= 500) {
      throw new Error(`the mail could not be stored (${response.status}); try again`);
    }
    if (response.status >= 400) {
      const body = await response.json() as { error?: { message?: string } };
      await _reject(message, body.error?.message ?? "message refused");
    }
  };
}

/**
 * Rejects the mail. Awaited: where the message is a stub (Miniflare's, over RPC) the call is
 * asynchronous, and the handler must not return before it lands; in production it is a no-op.
 */
async function _reject(message: ForwardableEmailMessage, reason: string): Promise<void> {
  await (message.setReject(reason) as unknown);
}

/** The app the handler hands each mail to: the config read and the context bound as for requests. */
function _emailApp(deployment: Deployment): Hono<App> {
  const app = new Hono<App>();
  app.use("*", entryBinding(deployment));
  app.post("/", async (c) => {
    const env = c.env as unknown as PlatformEnv;
    const envelope = {
      from: c.req.header("x-envelope-from") ?? "",
      to: c.req.header("x-envelope-to") ?? "",
    };
    const ingress = await mailIngress(new Uint8Array(await c.req.arrayBuffer()), envelope, env);
    if (ingress.kind === "reject") {
      log.warn("email: refused", { reason: ingress.reason });
      return jsonError(c, 422, ingress.reason, "mail_refused");
    }
    if (ingress.kind === "drop") {
      log.info("email: dropped unanswered", { reason: ingress.reason });
      return c.json({ ok: true, ignored: ingress.reason });
    }
    const { message } = ingress;
    const verdict = await gateMessage(c, EMAIL_ADAPTER, message);
    if (verdict instanceof Response) return verdict;
    const inbound = chatInbound(message, verdict);
    if (await messageDropped(c, inbound, EMAIL_ADAPTER.name)) {
      return c.json({ ok: true, ignored: "dropped by the messageReceived hook" });
    }
    // Its attachments are kept before the message is: the turn reads them back (never the mail).
    const media = await stageMailAttachments(ingress.attachments, {
      ...(c.env.MEDIA ? { store: r2MediaStore(c.env.MEDIA) } : {}),
      settings: c.var.config.media,
      scope: message.sessionKey,
    });
    if (media.length) inbound.platformMedia = media;
    await submitMessage(c.env, message.sessionKey, inbound, false);
    return c.json({ ok: true });
  });
  app.onError((error, c) => {
    if (error instanceof RequestError) return jsonError(c, error.status, error.message, error.type);
    log.error("email: unhandled", { error: errorText(error) });
    return jsonError(c, 500, "internal error", "internal_error");
  });
  return app;
}

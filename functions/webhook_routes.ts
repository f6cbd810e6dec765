// Signed inbound webhooks: one route per adapter (the chat platforms and the generic Standard Webhooks caller), each verify → parse → gate → session; Workers.
import { type Context, Hono } from "hono";
import {
  type Ingress,
  PayloadError,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type WebhookAnswer,
} from "../lib/chat/mod.ts";
import { chatInbound } from "../lib/platforms/chat_inbound.ts";
import { PLATFORMS } from "../lib/platforms/mod.ts";
import { publicUrl } from "../lib/platforms/_kit.ts";
import { type App, failureStatus, jsonError, RequestError, webhookAnswer } from "./_http.ts";
import { answerClick, runMessage, submitMessage } from "./session_client.ts";
import { gateMessage } from "./_access_gate.ts";
import { DROPPED_MESSAGE, messageDropped } from "./_message_hook.ts";
import { storeWebhookFiles } from "./_webhook_files.ts";

/** Routes under /webhooks. */
export const webhookRoutes = new Hono<App>();

// Each platform's adapter is loaded by its first delivery (lib/platforms/mod.ts).
for (const platform of PLATFORMS) {
  webhookRoutes.post(`/${platform.name}`, async (c) => {
    const adapter = await platform.load();
    const env = c.env as unknown as PlatformEnv;
    const disabled = _disabled(c, adapter, env);
    if (disabled) return disabled;
    const request = {
      headers: c.req.raw.headers,
      body: new Uint8Array(await c.req.arrayBuffer()),
      url: publicUrl(env.PUBLIC_URL, c.req.url),
      nowSeconds: Math.floor(Date.now() / 1000),
    };
    const refusal = await adapter.verify(request, env);
    if (typeof refusal === "object" && refusal !== null) {
      // Not the sender's fault, and nothing stored: the platform is asked to deliver it again.
      c.header("retry-after", "30");
      return jsonError(c, 503, refusal.unavailable, "verification_unavailable");
    }
    if (refusal) return jsonError(c, 401, refusal, "invalid_signature");
    const ingress = _parse(adapter, request, env);
    if (ingress.kind === "respond") return webhookAnswer(c, ingress);
    if (ingress.kind === "choice") return await _click(c, adapter, ingress.choice, env);
    if (ingress.kind === "run") return await _run(c, adapter, ingress);
    // Clicks batched with other events: each answered as a lone click, its answer not the delivery's.
    if (ingress.kind === "messages") {
      for (const choice of ingress.choices ?? []) await _click(c, adapter, choice, env);
    }
    const single = ingress.kind === "message";
    const messages = single ? [ingress.message] : ingress.messages;
    for (const message of messages) {
      const verdict = await gateMessage(c, adapter, message);
      // One message: the gate's answer is the delivery's. Several: its notice has gone out, and
      // the others still run.
      if (verdict instanceof Response) {
        if (single) return verdict;
        continue;
      }
      // The event as parsed and the gate's verdict, carried: nothing added, nothing decided again.
      // A command's answer or a busy notice goes out through the session's outbox, like replies.
      const inbound = chatInbound(message, verdict);
      // Dropped by the deployment's hook: acknowledged like any delivery, nothing stored or run.
      if (await messageDropped(c, inbound, adapter.name)) continue;
      await submitMessage(c.env, message.sessionKey, inbound, false);
    }
    return webhookAnswer(c, ingress.ack ?? adapter.acknowledgement ?? _OK);
  });
  if (platform.handshake) {
    webhookRoutes.get(`/${platform.name}`, async (c) => {
      const adapter = await platform.load();
      const env = c.env as unknown as PlatformEnv;
      const disabled = _disabled(c, adapter, env);
      if (disabled) return disabled;
      return webhookAnswer(c, await adapter.handshake!(new URL(c.req.url).searchParams, env));
    });
  }
}

const _OK: WebhookAnswer = { status: 200, body: { ok: true } };

/** 403 while a secret the adapter needs is missing (naming the settings, never a value), else null. */
function _disabled(c: Context<App>, adapter: PlatformAdapter, env: PlatformEnv): Response | null {
  const missing = adapter.requiredEnv.filter((name) => !env[name]);
  if (!missing.length) return null;
  return jsonError(
    c,
    403,
    `the ${adapter.name} webhook is disabled: set ${
      missing.join(", ")
    } (deployed: wrangler secret put NAME; locally: NAME=<value> lines in .dev.vars)`,
    "not_configured",
  );
}

/**
 * A click on a notice's button: the clicker passes the access gate as a message's sender would
 * (an unknown clicker is refused alike), then their session judges the click; the adapter answers
 * it from the typed result ("Approved", "Not yours", "Already answered").
 */
async function _click(
  c: Context<App>,
  adapter: PlatformAdapter,
  choice: PlatformChoice,
  env: PlatformEnv,
): Promise<Response> {
  // Judged as the command it stands for: a command is never counted by a quota, never a /pair.
  const verdict = await gateMessage(c, adapter, { ...choice, text: "/approve" });
  if (verdict instanceof Response) {
    // Discord's refusal is itself the click's answer; elsewhere the click is answered too.
    if (!adapter.inlineNotice) await adapter.answerChoice?.(choice, { kind: "not_allowed" }, env);
    return verdict;
  }
  const { sessionKey, data, context } = choice;
  const answer = await answerClick(c.env, sessionKey, data, context, verdict.admin);
  return webhookAnswer(
    c,
    await adapter.answerChoice?.(choice, answer, env) ?? adapter.acknowledgement ?? _OK,
  );
}

/**
 * A message answered with its turn's outcome (the generic webhook): gated, run, and answered
 * `{...echo, reply}`, or `{...echo, error}` with the failure's status.
 */
async function _run(
  c: Context<App>,
  adapter: PlatformAdapter,
  ingress: Extract<Ingress, { kind: "run" }>,
): Promise<Response> {
  const { message, echo } = ingress;
  const verdict = await gateMessage(c, adapter, message);
  if (verdict instanceof Response) return verdict;
  const inbound = chatInbound(message, verdict);
  if (await messageDropped(c, inbound, adapter.name)) {
    return jsonError(c, 422, DROPPED_MESSAGE, "message_dropped");
  }
  // Inline files are stored before the message, which keeps their references.
  const media = await storeWebhookFiles(c, ingress.files ?? [], message.sessionKey);
  if (media.length) inbound.media = media;
  const run = await runMessage(c.env, message.sessionKey, inbound);
  if (run === "history_mismatch") throw new Error("a webhook message never continues a seed");
  const { outcome } = run;
  if (outcome.status === "failed") {
    return c.json({ ...echo, error: outcome.error }, failureStatus(outcome.error));
  }
  return c.json({ ...echo, reply: outcome.reply });
}

function _parse(
  adapter: PlatformAdapter,
  request: Parameters<PlatformAdapter["parse"]>[0],
  env: PlatformEnv,
) {
  try {
    return adapter.parse(request, env);
  } catch (error) {
    if (error instanceof PayloadError) {
      throw new RequestError(400, error.message, "invalid_request_error");
    }
    throw error;
  }
}

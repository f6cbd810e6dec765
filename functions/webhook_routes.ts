// Signed inbound webhooks: the generic Standard Webhooks route and one route per chat platform adapter; Workers.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { accessVerdict, isAdmin } from "../lib/access/access_policy.ts";
import { sessionIdField } from "../lib/openai_api.ts";
import {
  PayloadError,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type WebhookAnswer,
} from "../lib/platform.ts";
import { PLATFORM_ADAPTERS } from "../lib/platforms/mod.ts";
import { publicUrl } from "../lib/platforms/_kit.ts";
import type { InboundMessage } from "../lib/session/mod.ts";
import { verifyStandardWebhook } from "../lib/standard_webhooks.ts";
import {
  type App,
  failureStatus,
  jsonError,
  parseJson,
  RequestError,
  webhookAnswer,
} from "./_http.ts";
import { answerClick, runMessage, submitMessage } from "./session_client.ts";
import { gateMessage } from "./_access_gate.ts";

const _genericBody = z.object({
  session: sessionIdField,
  text: z.string().min(1).max(100_000),
  user: z.string().max(256).optional(),
});

/** Routes under /webhooks. */
export const webhookRoutes = new Hono<App>();

webhookRoutes.post("/generic", async (c) => {
  const { config } = c.var;
  if (!config.webhookSecret) {
    return jsonError(
      c,
      403,
      "the generic webhook is disabled: set WEBHOOK_SECRET (deployed: wrangler secret put " +
        "WEBHOOK_SECRET; locally: a line WEBHOOK_SECRET=whsec_<base64> in .dev.vars)",
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
  // Trusted by its signature, unless ALLOWED_USERS names the generic users it accepts.
  const sender = { platform: "generic", user: payload.user ?? "", name: "", direct: false };
  if (accessVerdict(config.access, sender).kind !== "allowed") {
    return jsonError(c, 403, "user: not in ALLOWED_USERS for the generic webhook", "access_denied");
  }
  const sessionKey = `webhook:${payload.session}`;
  const message: InboundMessage = {
    text: payload.text,
    deliveryKey: verified.id,
    commands: true,
    context: {
      platform: "webhook",
      chat_id: payload.session,
      user_id: payload.user ?? "",
      user_name: payload.user ?? "",
      session_key: sessionKey,
      message_id: verified.id,
    },
  };
  const run = await runMessage(c.env, sessionKey, message);
  if (run === "history_mismatch") throw new Error("a webhook message never continues a seed");
  const { outcome } = run;
  if (outcome.status === "failed") {
    return c.json(
      { session: payload.session, error: outcome.error },
      failureStatus(outcome.error),
    );
  }
  return c.json({ session: payload.session, reply: outcome.reply });
});

for (const adapter of PLATFORM_ADAPTERS) {
  webhookRoutes.post(`/${adapter.name}`, async (c) => {
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
    // Clicks batched with other events: each answered as a lone click, its answer not the delivery's.
    if (ingress.kind === "messages") {
      for (const choice of ingress.choices ?? []) await _click(c, adapter, choice, env);
    }
    const single = ingress.kind === "message";
    const messages = single ? [ingress.message] : ingress.messages;
    for (const message of messages) {
      const refused = await gateMessage(c, adapter, message);
      // One message: the gate's answer is the delivery's. Several: its notice has gone out, and
      // the others still run.
      if (refused && single) return refused;
      if (refused) continue;
      const inbound: InboundMessage = {
        text: message.text,
        deliveryKey: message.deliveryKey,
        // Where the platform may deliver the same signed message again after the inbox's day.
        ...(adapter.keyMemoryMs ? { keyMemoryMs: adapter.keyMemoryMs } : {}),
        context: { ...message.context, platform: adapter.name, session_key: message.sessionKey },
        reply: message.reply,
        commands: true,
        // A chat the sender shares with others: grants and /stop are per member there (GROUP_STOP).
        ...(message.sender.direct ? {} : { group: true }),
        // Decided here, where the platform's own identity is at hand (a GitHub login, a Slack T…/U…).
        ...(isAdmin(c.var.config.access, { platform: adapter.name, ...message.sender })
          ? { admin: true }
          : {}),
      };
      // A command's answer or a busy notice goes out through the session's outbox, like replies.
      await submitMessage(c.env, message.sessionKey, inbound, false);
    }
    return webhookAnswer(c, ingress.ack ?? adapter.acknowledgement ?? _OK);
  });
  if (adapter.handshake) {
    const handshake = adapter.handshake.bind(adapter);
    webhookRoutes.get(`/${adapter.name}`, async (c) => {
      const env = c.env as unknown as PlatformEnv;
      const disabled = _disabled(c, adapter, env);
      if (disabled) return disabled;
      return webhookAnswer(c, await handshake(new URL(c.req.url).searchParams, env));
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

/** Not-allowed clickers see this where the refusal itself does not answer the click. */
const _NOT_ALLOWED = "Not allowed";

/**
 * A click on a notice's button: the clicker passes the access gate as a message's sender would
 * (an unknown clicker is refused alike), then their session judges the click; the adapter answers
 * it ("Approved", "Not yours", "Already answered").
 */
async function _click(
  c: Context<App>,
  adapter: PlatformAdapter,
  choice: PlatformChoice,
  env: PlatformEnv,
): Promise<Response> {
  // Judged as the command it stands for: a command is never counted by a quota, never a /pair.
  const refused = await gateMessage(c, adapter, { ...choice, text: "/approve" });
  if (refused) {
    // Discord's refusal is itself the click's answer; elsewhere the click is answered too.
    if (!adapter.inlineNotice) await adapter.answerChoice?.(choice, _NOT_ALLOWED, env);
    return refused;
  }
  const context = { ...choice.context, platform: adapter.name, session_key: choice.sessionKey };
  const admin = isAdmin(c.var.config.access, { platform: adapter.name, ...choice.sender });
  const text = await answerClick(c.env, choice.sessionKey, choice.data, context, admin);
  const answer = await adapter.answerChoice?.(choice, text, env) ?? adapter.acknowledgement ?? _OK;
  return webhookAnswer(c, answer);
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

// `npm run setup -- telegram [--check]`: setWebhook with the secret token and baton's updates, getWebhookInfo, a signed test delivery; Deno.
import type { SetupContext } from "./_context.ts";
import { answerText, probeDelivery } from "./_probe.ts";

/**
 * The updates baton acts on (lib/platforms/telegram.ts): messages, and clicks on its inline
 * buttons. Anything else it would only acknowledge, so Telegram is asked not to send it.
 */
export const TELEGRAM_UPDATES = ["message", "callback_query"];

/** Telegram's rule for `secret_token`: 1–256 of `A-Z a-z 0-9 _ -`. */
const _SECRET = /^[A-Za-z0-9_-]{1,256}$/;
const _HEADER = "X-Telegram-Bot-Api-Secret-Token";

/** Points the bot's webhook at the deployment (with the secret and updates), then confirms it. */
export async function setupTelegram(ctx: SetupContext): Promise<void> {
  const values = _settings(ctx);
  if (!values) return;
  const [token, secret] = values;
  const set = await _bot(ctx, token, "setWebhook", {
    url: ctx.webhookUrl,
    secret_token: secret,
    allowed_updates: TELEGRAM_UPDATES,
  });
  if (set === null) return;
  ctx.ok(`setWebhook: ${TELEGRAM_UPDATES.join(" and ")} updates, with the secret token`);
  await _confirm(ctx, token);
}

/**
 * Verifies a configured bot end to end: the webhook points here, and a delivery signed with the
 * local secret is accepted by the deployment — an update of no kind baton handles (only its
 * `update_id`), which baton acknowledges without starting a turn.
 */
export async function checkTelegram(ctx: SetupContext): Promise<void> {
  const values = _settings(ctx);
  if (!values) return;
  const [token, secret] = values;
  await _confirm(ctx, token);
  await probeDelivery(ctx, {
    headers: { "content-type": "application/json", [_HEADER]: secret },
    body: JSON.stringify({ update_id: 0 }),
    secretName: "TELEGRAM_WEBHOOK_SECRET",
  });
}

/** The bot token and webhook secret, each checked for its form; null after a problem. */
function _settings(ctx: SetupContext): [string, string] | null {
  const values = ctx.need("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET");
  if (!values) return null;
  const [token, secret] = values;
  if (!/^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/.test(token)) {
    ctx.problem("TELEGRAM_BOT_TOKEN is not a bot token of the form <id>:<secret> (@BotFather)");
    return null;
  }
  if (!_SECRET.test(secret)) {
    ctx.problem("TELEGRAM_WEBHOOK_SECRET must be 1–256 of A-Z a-z 0-9 _ - (Telegram's rule)");
    return null;
  }
  return [token, secret];
}

/** getWebhookInfo: a problem unless Telegram delivers to this deployment; its last error noted. */
async function _confirm(ctx: SetupContext, token: string): Promise<void> {
  const info = await _bot(ctx, token, "getWebhookInfo", {});
  if (info === null) return;
  const url = typeof info.url === "string" ? info.url : "";
  if (url !== ctx.webhookUrl) {
    ctx.problem(
      `getWebhookInfo: Telegram delivers to ${url || "nowhere (no webhook set)"}, not to ` +
        `${ctx.webhookUrl}: run npm run setup -- telegram`,
    );
  } else {
    ctx.ok(`getWebhookInfo: Telegram delivers to ${url}`);
  }
  const allowed: unknown = info.allowed_updates;
  if (Array.isArray(allowed) && allowed.length) {
    const missing = TELEGRAM_UPDATES.filter((u) => !allowed.includes(u));
    if (missing.length) {
      ctx.note(`Telegram does not send ${missing.join(", ")}: run npm run setup -- telegram`);
    }
  }
  if (typeof info.last_error_message === "string" && info.last_error_message) {
    const when = typeof info.last_error_date === "number"
      ? ` (${new Date(info.last_error_date * 1000).toISOString()})`
      : "";
    ctx.note(`Telegram's last delivery failed${when}: ${info.last_error_message}`);
  }
  if (typeof info.pending_update_count === "number" && info.pending_update_count > 0) {
    ctx.note(`${info.pending_update_count} update(s) wait at Telegram for delivery`);
  }
}

/** A Bot API method's `result`, or null after a problem (unreachable, refused, `ok: false`). */
async function _bot(
  ctx: SetupContext,
  token: string,
  method: string,
  payload: Record<string, unknown>,
  // deno-lint-ignore no-explicit-any
): Promise<any | null> {
  const root = (ctx.setting("TELEGRAM_API_ROOT") ?? "https://api.telegram.org").replace(/\/+$/, "");
  const answer = await ctx.call(`${root}/bot${token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payload),
  }, `the Telegram Bot API at ${root}`);
  if (!answer) return null;
  if (answer.status !== 200 || answer.body?.ok !== true) {
    const hint = answer.status === 401 || answer.status === 404
      ? " (is TELEGRAM_BOT_TOKEN the bot's token from @BotFather?)"
      : "";
    ctx.problem(`Telegram ${method} answered ${answer.status}${answerText(answer)}${hint}`);
    return null;
  }
  return answer.body.result ?? {};
}

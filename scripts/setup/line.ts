// `npm run setup -- line [--check]`: the Messaging API's webhook endpoint set and tested, and a signed test delivery; Deno.
import type { SetupContext } from "./_context.ts";
import { answerText, probeDelivery } from "./_probe.ts";

/** Sets the channel's webhook endpoint to the deployment, then has LINE test it. */
export async function setupLine(ctx: SetupContext): Promise<void> {
  const values = ctx.need("LINE_CHANNEL_ACCESS_TOKEN", "LINE_CHANNEL_SECRET");
  if (!values) return;
  const set = await _api(ctx, values[0], "PUT", "/v2/bot/channel/webhook/endpoint", {
    endpoint: ctx.webhookUrl,
  });
  if (set === null) return;
  ctx.ok(`webhook endpoint set to ${ctx.webhookUrl}`);
  ctx.note('turn "Use webhook" on in the LINE Developers console (the API cannot) if it is off');
  await _lineTest(ctx, values[0]);
}

/**
 * Verifies a configured channel: the endpoint is this deployment's and in use, a delivery signed
 * with the local channel secret (no events, as the console's Verify sends) is accepted, and LINE's
 * own test delivery reaches it.
 */
export async function checkLine(ctx: SetupContext): Promise<void> {
  const values = ctx.need("LINE_CHANNEL_ACCESS_TOKEN", "LINE_CHANNEL_SECRET");
  if (!values) return;
  const [token, secret] = values;
  const info = await _api(ctx, token, "GET", "/v2/bot/channel/webhook/endpoint");
  if (info !== null) {
    if (info.endpoint !== ctx.webhookUrl) {
      ctx.problem(
        `LINE delivers to ${info.endpoint || "nowhere"}, not to ${ctx.webhookUrl}: ` +
          "run npm run setup -- line",
      );
    } else if (info.active === false) {
      ctx.problem('the webhook is set here but not in use: turn "Use webhook" on in the console');
    } else ctx.ok(`LINE delivers to ${ctx.webhookUrl}`);
  }
  const body = JSON.stringify({ destination: "Ubatonsetupcheck", events: [] });
  await probeDelivery(ctx, {
    headers: { "content-type": "application/json", "x-line-signature": await _sign(secret, body) },
    body,
    secretName: "LINE_CHANNEL_SECRET",
  });
  await _lineTest(ctx, token);
}

/** `POST /v2/bot/channel/webhook/test`: LINE's signed delivery to the endpoint, and its outcome. */
async function _lineTest(ctx: SetupContext, token: string): Promise<void> {
  const test = await _api(ctx, token, "POST", "/v2/bot/channel/webhook/test", {
    endpoint: ctx.webhookUrl,
  });
  if (test === null) return;
  if (test.success === true) ctx.ok(`LINE's test delivery was answered ${test.statusCode ?? 200}`);
  else {
    ctx.problem(
      `LINE's test delivery failed: ${test.reason ?? "?"} ${test.statusCode ?? ""} ${
        test.detail ?? ""
      }`.trim(),
    );
  }
}

/** A Messaging API call's JSON answer, or null after a problem. */
async function _api(
  ctx: SetupContext,
  token: string,
  method: string,
  path: string,
  payload?: Record<string, unknown>,
  // deno-lint-ignore no-explicit-any
): Promise<any | null> {
  const root = (ctx.setting("LINE_API_ROOT") ?? "https://api.line.me").replace(/\/+$/, "");
  const answer = await ctx.call(`${root}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(payload ? { "content-type": "application/json" } : {}),
    },
    ...(payload ? { body: JSON.stringify(payload) } : {}),
  }, `the LINE Messaging API at ${root}`);
  if (!answer) return null;
  if (answer.status !== 200) {
    ctx.problem(`LINE ${method} ${path} answered ${answer.status}${answerText(answer)}`);
    return null;
  }
  return answer.body && typeof answer.body === "object" ? answer.body : {};
}

/** `x-line-signature`: base64 of HMAC-SHA256(channel secret, body). */
async function _sign(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return btoa(String.fromCharCode(...mac));
}

// `npm run setup -- whatsapp [--app-id ID] [--check]`: the console steps, the app's subscription read back, the verify-token handshake and a signed test delivery; Deno.
import type { SetupContext } from "./_context.ts";
import { answerText, hmacHex, probeDelivery } from "./_probe.ts";

/** Prints the console steps (only Meta's console sets the callback), then checks what it can. */
export async function setupWhatsapp(ctx: SetupContext): Promise<void> {
  ctx.note("WhatsApp: only Meta's console sets the webhook — follow these steps:");
  ctx.print(`  1. Meta for Developers → your app → WhatsApp → Configuration → Webhook → Edit.`);
  ctx.print(
    `  2. Callback URL: ${ctx.webhookUrl}; Verify token: the value of WHATSAPP_VERIFY_TOKEN.`,
  );
  ctx.print("  3. Verify and save, then Webhook fields → subscribe to messages.");
  ctx.print("  4. Then: npm run setup -- whatsapp --check --app-id <the app's id>");
  if (ctx.option("app-id")) await _subscription(ctx);
}

/**
 * Verifies: the handshake answers with the local verify token, a delivery signed with the local
 * app secret (no entries) is accepted, and with `--app-id` the app's subscription is read back.
 */
export async function checkWhatsapp(ctx: SetupContext): Promise<void> {
  const values = ctx.need("WHATSAPP_VERIFY_TOKEN", "WHATSAPP_APP_SECRET");
  if (!values) return;
  const challenge = String(Date.now());
  const query = new URLSearchParams({
    "hub.mode": "subscribe",
    "hub.verify_token": values[0],
    "hub.challenge": challenge,
  });
  const shake = await ctx.call(`${ctx.webhookUrl}?${query}`, { method: "GET" }, "the deployment");
  if (shake && shake.status === 200 && String(shake.body) === challenge) {
    ctx.ok("the deployment answers Meta's handshake with this WHATSAPP_VERIFY_TOKEN");
  } else if (shake) {
    ctx.problem(
      `the handshake was answered ${shake.status}${answerText(shake)}: WHATSAPP_VERIFY_TOKEN ` +
        "here differs from the deployment's, or it is not set there",
    );
  }
  const body = JSON.stringify({ object: "whatsapp_business_account", entry: [] });
  await probeDelivery(ctx, {
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": `sha256=${await hmacHex(values[1], body)}`,
    },
    body,
    secretName: "WHATSAPP_APP_SECRET",
  });
  if (ctx.option("app-id")) await _subscription(ctx);
  else ctx.note("pass --app-id <the app's id> to read back the app's webhook subscription");
}

/** `GET /{app-id}/subscriptions` with the app token: the WhatsApp callback is here, with `messages`. */
async function _subscription(ctx: SetupContext): Promise<void> {
  const values = ctx.need("WHATSAPP_APP_SECRET");
  if (!values) return;
  const app = ctx.option("app-id") ?? "";
  const root = (ctx.setting("WHATSAPP_API_ROOT") ?? "https://graph.facebook.com/v21.0")
    .replace(/\/+$/, "");
  const answer = await ctx.call(
    `${root}/${encodeURIComponent(app)}/subscriptions`,
    { headers: { authorization: `Bearer ${app}|${values[0]}` } },
    `the Graph API at ${root}`,
  );
  if (!answer) return;
  if (answer.status !== 200) {
    // A bad app token is Graph's OAuthException (code 190), answered 400 or 401.
    const refused = answer.body?.error?.code === 190 || answer.status === 401;
    ctx.problem(
      refused
        ? `the Graph API refused --app-id and WHATSAPP_APP_SECRET (${answer.status}` +
          `${answerText(answer)}): both must be the app's (App settings → Basic)`
        : `the Graph API answered ${answer.status}${answerText(answer)}`,
    );
    return;
  }
  // deno-lint-ignore no-explicit-any
  const sub = (answer.body?.data ?? []).find((s: any) => s.object === "whatsapp_business_account");
  if (!sub) {
    ctx.problem(
      "the app has no whatsapp_business_account subscription: set the callback in the console " +
        "(the steps above: npm run setup -- whatsapp)",
    );
    return;
  }
  // Graph lists each field as `{ name, version }`; older answers had bare names.
  const fields: string[] = (sub.fields ?? []).map((f: string | { name?: string }) =>
    typeof f === "string" ? f : String(f?.name)
  );
  // Every difference at once: one trip to the console fixes them all.
  const wrong: string[] = [];
  if (sub.callback_url !== ctx.webhookUrl) {
    wrong.push(`WhatsApp delivers to ${sub.callback_url || "nowhere"}, not to ${ctx.webhookUrl}`);
  }
  if (!fields.includes("messages")) {
    wrong.push(
      `the subscribed fields are ${fields.join(", ") || "none"}: subscribe to messages ` +
        "(WhatsApp → Configuration → Webhook fields)",
    );
  }
  if (sub.active === false) {
    wrong.push("the WhatsApp subscription is inactive: verify and save the callback again");
  }
  for (const line of wrong) ctx.problem(line);
  if (!wrong.length) ctx.ok(`WhatsApp delivers messages to ${ctx.webhookUrl}`);
}

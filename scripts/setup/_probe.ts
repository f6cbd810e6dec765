// A test delivery to the deployment's webhook route, its answer read as the check's verdict (accepted, secret refused, route disabled); Deno.
import type { SetupAnswer, SetupContext } from "./_context.ts";

/** A delivery the deployment acknowledges without a turn, signed (or not) as the platform would. */
export interface Probe {
  headers: Record<string, string>;
  body: string;
  /** The setting(s) the signature was made with: named when the deployment refuses it. */
  secretName: string;
  /** Whether a 200 answer is the one expected (e.g. Slack's challenge echoed); default any 200. */
  accepted?: (answer: SetupAnswer) => boolean;
}

/**
 * POSTs `probe` to the platform's route and reports: accepted (200), the secret refused (401:
 * the local value differs from the deployment's), the route disabled (403, baton's message naming
 * the settings it lacks) or anything else with the deployment's own error text.
 */
export async function probeDelivery(ctx: SetupContext, probe: Probe): Promise<void> {
  const answer = await ctx.call(ctx.webhookUrl, {
    method: "POST",
    headers: probe.headers,
    body: probe.body,
  }, `the deployment at ${ctx.webhookUrl}`);
  if (!answer) return;
  if (answer.status === 200 && (probe.accepted?.(answer) ?? true)) {
    ctx.ok(`a signed test delivery was accepted by ${ctx.webhookUrl} (no turn started)`);
  } else if (answer.status === 401) {
    ctx.problem(
      `the deployment refused the secret: ${probe.secretName} here differs from the ` +
        `deployment's. Set the same value on both (wrangler secret put ${probe.secretName})` +
        `, then run npm run setup -- ${ctx.platform}`,
    );
  } else {
    ctx.problem(`the deployment answered the test delivery ${answer.status}${answerText(answer)}`);
  }
}

/**
 * For a platform whose deliveries only it can sign (Discord, Teams, Google Chat): an unsigned
 * POST must be refused 401 — the route is configured and checks signatures; 403 means it is
 * disabled (baton names the settings it lacks).
 */
export async function probeRoute(ctx: SetupContext): Promise<void> {
  const answer = await ctx.call(ctx.webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  }, `the deployment at ${ctx.webhookUrl}`);
  if (!answer) return;
  if (answer.status === 401 || answer.status === 503) {
    ctx.ok(`${ctx.webhookUrl} is configured: it refused an unsigned delivery (${answer.status})`);
    ctx.note(
      `only ${ctx.platform} can sign a delivery: send the bot a message to finish the check`,
    );
  } else {
    ctx.problem(
      `${ctx.webhookUrl} answered an unsigned delivery ${answer.status}` +
        `${answerText(answer)}`,
    );
  }
}

/** An answer's own error text as ": <text>" (baton's `error.message`, a platform's `description`). */
export function answerText(answer: SetupAnswer): string {
  // deno-lint-ignore no-explicit-any
  const b = answer.body as any;
  const text = typeof b?.error?.message === "string"
    ? b.error.message
    : typeof b?.description === "string"
    ? b.description
    : typeof b?.message === "string"
    ? b.message
    : typeof b === "string"
    ? b
    : "";
  return text ? `: ${text.slice(0, 300)}` : "";
}

/** Lowercase hex of HMAC-SHA256(`secret`, `data`), as Slack, GitHub and WhatsApp sign. */
export async function hmacHex(secret: string, data: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

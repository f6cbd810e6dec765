// `npm run setup -- twilio [--number +1…] [--check]`: the number's SmsUrl set through the IncomingPhoneNumbers API, and a signed test delivery; Deno.
import type { SetupContext } from "./_context.ts";
import { answerText, probeDelivery } from "./_probe.ts";

/** Points `--number`'s incoming messages at the deployment (SmsUrl, POST); without it, the steps. */
export async function setupTwilio(ctx: SetupContext): Promise<void> {
  const values = ctx.need("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN");
  if (!values) return;
  const number = await _number(ctx, values);
  if (number === null) return;
  const root = _root(ctx);
  const updated = await _api(
    ctx,
    values,
    `${root}/2010-04-01/Accounts/${values[0]}/IncomingPhoneNumbers/${number.sid}.json`,
    new URLSearchParams({ SmsUrl: ctx.webhookUrl, SmsMethod: "POST" }),
  );
  if (updated === null) return;
  if (updated.sms_url !== ctx.webhookUrl) {
    ctx.problem(`Twilio kept ${updated.sms_url} as ${number.phone_number}'s SmsUrl`);
  } else ctx.ok(`${number.phone_number}: incoming messages POST to ${ctx.webhookUrl}`);
  if (!ctx.setting("PUBLIC_URL")) {
    ctx.note(`Twilio signs the URL it calls: set PUBLIC_URL=${ctx.base} on the deployment too`);
  }
}

/**
 * Verifies: `--number`'s SmsUrl is this deployment (when given), and a delivery signed with the
 * local auth token — a status callback, which baton acknowledges without a turn — is accepted.
 */
export async function checkTwilio(ctx: SetupContext): Promise<void> {
  const values = ctx.need("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN");
  if (!values) return;
  if (ctx.option("number")) {
    const number = await _number(ctx, values);
    if (number !== null && number.sms_url !== ctx.webhookUrl) {
      ctx.problem(
        `${number.phone_number}'s messages go to ${number.sms_url || "nowhere"}, not to ` +
          `${ctx.webhookUrl}: run npm run setup -- twilio --number ${number.phone_number}`,
      );
    } else if (number !== null) ctx.ok(`${number.phone_number}'s messages go to ${ctx.webhookUrl}`);
  } else ctx.note("pass --number +1… to check where its messages go");
  const params = new URLSearchParams({
    AccountSid: values[0],
    MessageSid: "SM00000000000000000000000000000000",
    MessageStatus: "delivered",
  });
  const body = params.toString();
  await probeDelivery(ctx, {
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": await twilioSignature(values[1], ctx.webhookUrl, params),
    },
    body,
    secretName: "TWILIO_AUTH_TOKEN (or the deployment's PUBLIC_URL)",
  });
}

/**
 * `--number`'s IncomingPhoneNumber record, or null after a problem (none given, not E.164, not
 * on the account). Twilio's `PhoneNumber` filter also matches partial numbers, so only the record
 * of the very number counts: setting a look-alike's webhook would be silent damage.
 */
// deno-lint-ignore no-explicit-any
async function _number(ctx: SetupContext, auth: string[]): Promise<any | null> {
  const given = ctx.option("number");
  if (!given) {
    ctx.problem(
      "pass --number +15551234567 (the Twilio number), or in the console: Phone Numbers → the " +
        `number → Messaging → "A message comes in": Webhook, HTTP POST, ${ctx.webhookUrl}`,
    );
    return null;
  }
  // The console shows numbers as "+1 555 123 4567": spaces, dashes, dots and parentheses go.
  const number = given.replace(/[\s().-]/g, "");
  if (!/^\+[1-9]\d{6,14}$/.test(number)) {
    ctx.problem(`--number ${given} is not an E.164 number: write it as +15551234567`);
    return null;
  }
  const list = await _api(
    ctx,
    auth,
    `${_root(ctx)}/2010-04-01/Accounts/${auth[0]}/IncomingPhoneNumbers.json?` +
      new URLSearchParams({ PhoneNumber: number }),
  );
  if (list === null) return null;
  // deno-lint-ignore no-explicit-any
  const all: any[] = Array.isArray(list.incoming_phone_numbers) ? list.incoming_phone_numbers : [];
  const found = all.find((n) => n?.phone_number === number);
  if (!found) {
    const like = all.map((n) => n?.phone_number).filter((n) => typeof n === "string");
    ctx.problem(
      `the account has no number ${number}` + (like.length ? ` (it has ${like.join(", ")})` : "") +
        ": check the number in the console (Phone Numbers → Active numbers) and the account's " +
        "TWILIO_ACCOUNT_SID",
    );
  }
  return found ?? null;
}

function _root(ctx: SetupContext): string {
  return (ctx.setting("TWILIO_API_ROOT") ?? "https://api.twilio.com").replace(/\/+$/, "");
}

/** A REST call with basic auth (GET, or POST of `form`): its JSON, or null after a problem. */
async function _api(
  ctx: SetupContext,
  [sid, token]: string[],
  url: string,
  form?: URLSearchParams,
  // deno-lint-ignore no-explicit-any
): Promise<any | null> {
  const answer = await ctx.call(url, {
    method: form ? "POST" : "GET",
    headers: {
      authorization: `Basic ${btoa(`${sid}:${token}`)}`,
      ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
    ...(form ? { body: form.toString() } : {}),
  }, `the Twilio API at ${_root(ctx)}`);
  if (!answer) return null;
  if (answer.status === 401) {
    // Twilio's 20003: the SID and token do not go together. Neither is printed (both secret).
    ctx.problem(
      `Twilio refused TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (401${
        answerText(answer).replace(/^:/, "")
      }): set the account's own (console → Account info), then run this again`,
    );
    return null;
  }
  if (answer.status !== 200) {
    ctx.problem(`Twilio answered ${answer.status}${answerText(answer)}`);
    return null;
  }
  return answer.body;
}

/** `X-Twilio-Signature`: base64 HMAC-SHA1 of the URL, then each parameter's name and value by name. */
export async function twilioSignature(
  token: string,
  url: string,
  params: URLSearchParams,
): Promise<string> {
  const data = url + [...params].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([k, v]) => k + v).join("");
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(token),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data)));
  return btoa(String.fromCharCode(...mac));
}

// Test support: the Slack adapter's unit-test fixtures (env, signed requests, event payloads); Deno (tests only).
import type { RawRequest } from "../chat/mod.ts";
import { signSlackRequest } from "./slack.ts";

/** The signing secret the fixtures sign with. */
export const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
/** The bot token the send tests expect to see, and never in a result. */
export const TOKEN = "xoxb-unit-test-token";
/** An env with the signing secret and the bot token. */
export const ENV = { SLACK_SIGNING_SECRET: SECRET, SLACK_BOT_TOKEN: TOKEN };
/** The fixtures' clock, in seconds. */
export const NOW = 1_700_000_000;
/** The bot's own user id, as in the envelope's authorizations. */
export const BOT = "UBOT123";

/** A request carrying `body`, signed with SECRET at NOW unless `opts` say otherwise. */
export async function signed(
  body: string,
  opts: { timestamp?: number; secret?: string; signature?: string; contentType?: string } = {},
): Promise<RawRequest> {
  const timestamp = opts.timestamp ?? NOW;
  const signature = opts.signature ??
    await signSlackRequest({ secret: opts.secret ?? SECRET, timestamp, body });
  return {
    headers: new Headers({
      "content-type": opts.contentType ?? "application/json",
      "x-slack-signature": signature,
      "x-slack-request-timestamp": String(timestamp),
    }),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/slack",
    nowSeconds: NOW,
  };
}

/** An event_callback envelope around `event`, with a fresh event id and the bot authorization. */
export function callback(event: Record<string, unknown>): string {
  return JSON.stringify({
    token: "legacy",
    team_id: "T1",
    api_app_id: "A1",
    type: "event_callback",
    event_id: `Ev${crypto.randomUUID()}`,
    event_time: NOW,
    authorizations: [{ team_id: "T1", user_id: BOT, is_bot: true }],
    event,
  });
}

/** An app_mention of the bot in channel C1, with `extra` fields merged over it. */
export const mention = (extra: Record<string, unknown> = {}) => ({
  type: "app_mention",
  user: "U1",
  text: `<@${BOT}> hello there`,
  ts: "1700000000.000100",
  channel: "C1",
  event_ts: "1700000000.000100",
  ...extra,
});

/** A direct message to the bot in D1, with `extra` fields merged over it. */
export const dm = (extra: Record<string, unknown> = {}) => ({
  type: "message",
  user: "U1",
  text: "hi in private",
  ts: "1700000000.000200",
  channel: "D1",
  channel_type: "im",
  ...extra,
});

// Slack adapter (stub until implemented): verify, parse, send; runtime-neutral (fetch, Web Crypto).
import type { PlatformAdapter } from "../platform.ts";

/** Slack webhooks in, replies out. */
export const slackAdapter: PlatformAdapter = {
  name: "slack",
  requiredEnv: ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"],
  maxMessageChars: 40000,
  asyncDelivery: false,
  verify: () => Promise.resolve("not implemented"),
  parse: () => ({ kind: "respond", status: 200, body: { ok: true } }),
  send: () =>
    Promise.resolve({ ok: false, status: 0, retryable: false, message: "not implemented" }),
};

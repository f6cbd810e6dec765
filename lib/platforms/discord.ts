// Discord adapter (stub until implemented): verify, parse, send; runtime-neutral (fetch, Web Crypto).
import type { PlatformAdapter } from "../platform.ts";

/** Discord webhooks in, replies out. */
export const discordAdapter: PlatformAdapter = {
  name: "discord",
  requiredEnv: ["DISCORD_PUBLIC_KEY", "DISCORD_APPLICATION_ID"],
  maxMessageChars: 2000,
  asyncDelivery: false,
  verify: () => Promise.resolve("not implemented"),
  parse: () => ({ kind: "respond", status: 200, body: { ok: true } }),
  send: () =>
    Promise.resolve({ ok: false, status: 0, retryable: false, message: "not implemented" }),
};

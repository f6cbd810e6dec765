// Telegram adapter (stub until implemented): verify, parse, send; runtime-neutral (fetch, Web Crypto).
import type { PlatformAdapter } from "../platform.ts";

/** Telegram webhooks in, replies out. */
export const telegramAdapter: PlatformAdapter = {
  name: "telegram",
  requiredEnv: ["TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN"],
  maxMessageChars: 4096,
  asyncDelivery: false,
  verify: () => Promise.resolve("not implemented"),
  parse: () => ({ kind: "respond", status: 200, body: { ok: true } }),
  send: () =>
    Promise.resolve({ ok: false, status: 0, retryable: false, message: "not implemented" }),
};

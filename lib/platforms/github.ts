// Github adapter (stub until implemented): verify, parse, send; runtime-neutral (fetch, Web Crypto).
import type { PlatformAdapter } from "../platform.ts";

/** Github webhooks in, replies out. */
export const githubAdapter: PlatformAdapter = {
  name: "github",
  requiredEnv: ["GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_BOT_LOGIN"],
  maxMessageChars: 65536,
  asyncDelivery: false,
  verify: () => Promise.resolve("not implemented"),
  parse: () => ({ kind: "respond", status: 200, body: { ok: true } }),
  send: () =>
    Promise.resolve({ ok: false, status: 0, retryable: false, message: "not implemented" }),
};

// One rig for chat-platform tests: baton in workerd, a fake model and a fake platform API on loopback; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { json, withBaton } from "./clients.ts";
import type { FakeModel } from "../../lib/testing/fake_model.ts";
import { type FakePlatform, startFakePlatform } from "./fake_platform.ts";
import type { TestWorker } from "./worker.ts";

/**
 * The settings that point every platform adapter at `platform` (its API roots, Teams' and Google
 * Chat's key sets and token endpoints), with previews off: a deployment needs only the secrets more.
 */
export function apiRoots(platform: FakePlatform): Record<string, string> {
  return {
    TELEGRAM_API_ROOT: platform.url,
    SLACK_API_ROOT: `${platform.url}/api`,
    DISCORD_API_ROOT: platform.url,
    GITHUB_API_ROOT: platform.url,
    WHATSAPP_API_ROOT: platform.url,
    LINE_API_ROOT: platform.url,
    LINE_DATA_API_ROOT: platform.url,
    TWILIO_API_ROOT: platform.url,
    // Teams replies go to each activity's serviceUrl: tests name the fake's URL there.
    TEAMS_OPENID_URL: `${platform.url}/auth/teams/openid`,
    TEAMS_TOKEN_URL: `${platform.url}/auth/teams/token`,
    GOOGLE_CHAT_JWKS_URL: `${platform.url}/auth/jwks`,
    GOOGLE_CHAT_TOKEN_URL: `${platform.url}/auth/google/token`,
    GOOGLE_CHAT_API_ROOT: `${platform.url}/chat/v1`,
    // Previews edit Discord's @original before the reply does: off unless a test asks for them.
    STREAM_REPLIES: "off",
  };
}

/**
 * Runs `fn` against baton wired to a fresh fake model and a fresh fake platform API, which
 * stands in for every platform's API root (Telegram, Slack, Discord, GitHub, WhatsApp, LINE,
 * Twilio, Teams, Google Chat — with their key sets and token endpoints), so `vars` need
 * only the secrets. A var set to `undefined` is left out (a missing secret); everything is
 * disposed after. With `persistDir` and a `platform` of the caller's, a second call is a restart
 * of the same deployment: the same stored state, the same platform API and its record of calls.
 */
export async function withPlatform(
  vars: Record<string, string | undefined>,
  fn: (worker: TestWorker, fake: FakeModel, platform: FakePlatform) => Promise<void>,
  opts: { persistDir?: string; platform?: FakePlatform; media?: boolean } = {},
): Promise<void> {
  const platform = opts.platform ?? await startFakePlatform();
  try {
    const all = { ...apiRoots(platform), ...vars };
    const set = Object.fromEntries(
      Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
    );
    await withBaton((worker, fake) => fn(worker, fake, platform), {
      vars: set,
      ...(opts.persistDir ? { persistDir: opts.persistDir } : {}),
      ...(opts.media ? { media: true } : {}),
    });
  } finally {
    if (!opts.platform) await platform.close();
  }
}

/** Asserts a 200 whose JSON body is `body` (a webhook's acknowledgement, `{ok: true}` unless given). */
export async function expectOk(res: Response, body: unknown = { ok: true }): Promise<void> {
  const got = await json(res);
  assertStrictEquals(res.status, 200, JSON.stringify(got));
  assertEquals(got, body);
}

/**
 * Waits `ms`: lets a wrongly started turn reach the model, or a wrong second reply reach the
 * platform, before asserting there was none.
 */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

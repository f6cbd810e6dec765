// Teams' and Google Chat's bot tokens and signing-key sets against the loopback fake platform: a 429 (or a 503 stating its wait) is waited out once, a second one or a wait over the cap is answered clearly, naming no secret; Deno.
import { assert, assertEquals } from "@std/assert";
import {
  type FakePlatform,
  type PlatformAnswer,
  startFakePlatform,
} from "./_support/fake_platform.ts";
import { type KeySource, resetJwtCaches, verifyJwt } from "../lib/platforms/_jwt.ts";
import { signTestJwt, testServiceAccount, testSigningKey } from "../lib/platforms/_jwt_fixtures.ts";
import { googleChatToken } from "../lib/platforms/google_chat_token.ts";
import { teamsBotToken } from "../lib/platforms/teams_token.ts";

const PASSWORD = "teams-app-password-0123456789";

/** A 429 asking for `seconds` in Retry-After. */
const busy = (seconds: string): PlatformAnswer => ({
  status: 429,
  body: { error: "temporarily_unavailable" },
  headers: { "retry-after": seconds },
});

/**
 * Runs `fn` with a fresh fake whose `/auth/` calls to `path` are answered by `answers` in turn
 * (then as usual), and fresh key and token caches.
 */
async function withAuthAnswers(
  path: string,
  answers: PlatformAnswer[],
  fn: (platform: FakePlatform, asked: () => number) => Promise<void>,
): Promise<void> {
  resetJwtCaches();
  const platform = await startFakePlatform();
  try {
    let seen = 0;
    platform.respondToAuth((call, i, usual) =>
      call.path === path && seen < answers.length ? answers[seen++] : usual(call, i)
    );
    await fn(platform, () => platform.auth.filter((c) => c.path === path).length);
  } finally {
    resetJwtCaches();
    await platform.close();
  }
}

function teamsEnv(platform: FakePlatform) {
  return {
    TEAMS_APP_ID: "app-1",
    TEAMS_APP_PASSWORD: PASSWORD,
    TEAMS_TOKEN_URL: `${platform.url}/auth/teams/token`,
  };
}

Deno.test("teamsBotToken() waits out a token endpoint's 429 with Retry-After once, then has the token", async () => {
  await withAuthAnswers("/auth/teams/token", [busy("1")], async (platform, asked) => {
    const got = await teamsBotToken(teamsEnv(platform));
    assert(got.ok, JSON.stringify(got));
    assertEquals(got.token, "fake-access-token-2");
    assertEquals(asked(), 2);
  });
});

Deno.test("teamsBotToken() answers a second 429, over the cap, as a clear failure with its wait and no secret", async () => {
  await withAuthAnswers("/auth/teams/token", [busy("1"), busy("3600")], async (platform, asked) => {
    const got = await teamsBotToken(teamsEnv(platform));
    assertEquals(got, {
      ok: false,
      status: 429,
      retryable: true,
      retryAfterMs: 3_600_000,
      message: "the Microsoft identity platform answered 429: temporarily_unavailable",
    });
    assertEquals(asked(), 2, "waited out once, then answered");
    assert(!JSON.stringify(got).includes(PASSWORD));
  });
});

Deno.test("teamsBotToken() does not wait a 429 asking for more than the cap: one request", async () => {
  await withAuthAnswers("/auth/teams/token", [busy("60")], async (platform, asked) => {
    const got = await teamsBotToken(teamsEnv(platform));
    assert(!got.ok && got.status === 429 && got.retryAfterMs === 60_000, JSON.stringify(got));
    assertEquals(asked(), 1);
  });
});

Deno.test("googleChatToken() waits out the token endpoint's 503 with Retry-After once; a second answer over the cap fails naming no key", async () => {
  const account = await testServiceAccount();
  const unavailable: PlatformAnswer = { status: 503, headers: { "retry-after": "1" } };
  await withAuthAnswers("/auth/google/token", [unavailable], async (platform, asked) => {
    const env = {
      GOOGLE_CHAT_SERVICE_ACCOUNT: account.json,
      GOOGLE_CHAT_TOKEN_URL: `${platform.url}/auth/google/token`,
    };
    const got = await googleChatToken(env);
    assert(got.ok, JSON.stringify(got));
    assertEquals(asked(), 2);
  });
  await withAuthAnswers(
    "/auth/google/token",
    [busy("1"), busy("3600")],
    async (platform, asked) => {
      const env = {
        GOOGLE_CHAT_SERVICE_ACCOUNT: account.json,
        GOOGLE_CHAT_TOKEN_URL: `${platform.url}/auth/google/token`,
      };
      const got = await googleChatToken(env);
      assert(!got.ok, JSON.stringify(got));
      assertEquals(
        got.message,
        "the Google OAuth token endpoint answered 429: temporarily_unavailable",
      );
      assertEquals(got.retryAfterMs, 3_600_000);
      assertEquals(asked(), 2);
      const text = JSON.stringify(got);
      assert(!text.includes(account.privateKeyPem.slice(40, 80)) && !text.includes("BEGIN"), text);
    },
  );
});

/** A token the fake's key set verifies, and what `verifyJwt` is asked to check of it. */
async function signed(platform: FakePlatform) {
  const key = await testSigningKey("wait-out-key");
  platform.jwks.keys.push(key.jwk);
  const token = await signTestJwt(key, { issuer: "https://issuer.example", audience: "app-1" });
  const options = { issuer: "https://issuer.example", audience: "app-1", algorithms: ["RS256"] };
  return { token, options, now: Math.floor(Date.now() / 1000) };
}

Deno.test("verifyJwt() waits out a 429 on the key set (JWKS) and a 503 on the OpenID metadata once, then verifies", async () => {
  await withAuthAnswers("/auth/jwks", [busy("1")], async (platform, asked) => {
    const { token, options, now } = await signed(platform);
    const source: KeySource = { jwksUrl: `${platform.url}/auth/jwks` };
    const got = await verifyJwt(token, source, options, now);
    assert(typeof got === "object" && "payload" in got, JSON.stringify(got));
    assertEquals(asked(), 2);
  });
  const unavailable: PlatformAnswer = { status: 503, headers: { "retry-after": "1" } };
  await withAuthAnswers("/auth/teams/openid", [unavailable], async (platform, asked) => {
    const { token, options, now } = await signed(platform);
    const source: KeySource = { openIdUrl: `${platform.url}/auth/teams/openid` };
    const got = await verifyJwt(token, source, options, now);
    assert(typeof got === "object" && "payload" in got, JSON.stringify(got));
    assertEquals(asked(), 2);
  });
});

Deno.test("verifyJwt() answers a key set that stays rate-limited, or asks for more than the cap, as unavailable", async () => {
  for (const answers of [[busy("1"), busy("1")], [busy("3600")]]) {
    await withAuthAnswers("/auth/jwks", answers, async (platform, asked) => {
      const { token, options, now } = await signed(platform);
      const got = await verifyJwt(token, { jwksUrl: `${platform.url}/auth/jwks` }, options, now);
      assertEquals(got, { unavailable: "could not fetch the platform's signing keys" });
      assertEquals(asked(), answers.length, "waited out at most once, nothing past the cap");
    });
  }
});

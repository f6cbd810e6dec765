// Unit tests for lib/platforms/teams.ts: Bot Framework JWT verification (keys, issuer, audience, endorsements, serviceUrl), activity parsing and Bot Connector sends over a stubbed fetch; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { PayloadError, type RawRequest, replyChannel } from "../chat/mod.ts";
import { TEAMS_ISSUER, teamsAdapter, type TeamsTarget } from "./teams.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { signTestJwt, testSigningKey } from "./_jwt_fixtures.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";

const APP_ID = "8e2f1d6a-3b1c-4f0e-9a7d-5c6b4a3f2e1d";
const PASSWORD = "teams-app-password-0123456789";
const OPENID = "http://login.teams.test/v1/.well-known/openidconfiguration";
const JWKS = "http://login.teams.test/v1/keys";
const TOKEN_URL = "http://token.teams.test/oauth2/v2.0/token";
const SERVICE_URL = "https://smba.trafficmanager.net/amer/";
const ENV = {
  TEAMS_APP_ID: APP_ID,
  TEAMS_APP_PASSWORD: PASSWORD,
  TEAMS_OPENID_URL: OPENID,
  TEAMS_TOKEN_URL: TOKEN_URL,
};
const NOW = Math.floor(Date.now() / 1000);
const KEY = await testSigningKey("bf-key-1", { endorsements: ["msteams", "webchat"] });
const OTHER = await testSigningKey("bf-key-1", { endorsements: ["msteams"] });
const UNENDORSED = await testSigningKey("bf-key-2", { endorsements: ["webchat"] });
const PART = { index: 0, count: 1, marker: "o9-part" };

/** Answers the OpenID metadata, the key set, the token endpoint and (201) the Bot Connector. */
function platform(connector?: (call: FetchCall, index: number) => Response) {
  let sends = 0;
  return (call: FetchCall): Response => {
    if (call.url === OPENID) return Response.json({ issuer: TEAMS_ISSUER, jwks_uri: JWKS });
    if (call.url === JWKS) return Response.json({ keys: [KEY.jwk, UNENDORSED.jwk] });
    if (call.url === TOKEN_URL) {
      return Response.json({ token_type: "Bearer", expires_in: 3599, access_token: "bf-token-1" });
    }
    return connector?.(call, sends++) ?? Response.json({ id: "1:reply" }, { status: 201 });
  };
}

/** A message activity in a personal chat (or `over` merged in), as the Bot Connector sends it. */
export function teamsMessage(text: string, over: Record<string, unknown> = {}) {
  return {
    type: "message",
    id: "1700000000001",
    timestamp: "2026-11-23T08:00:00.000Z",
    serviceUrl: SERVICE_URL,
    channelId: "msteams",
    from: { id: "29:1user-abc", name: "Ada Lovelace", aadObjectId: "aad-ada-0001" },
    conversation: { id: "a:1personal-chat", conversationType: "personal", tenantId: "tenant-1" },
    recipient: { id: `28:${APP_ID}`, name: "baton" },
    text,
    textFormat: "plain",
    channelData: { tenant: { id: "tenant-1" } },
    ...over,
  };
}

function request(
  activity: unknown,
  token: string | null,
): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    }),
    body: new TextEncoder().encode(JSON.stringify(activity)),
    url: "https://baton.test/webhooks/teams",
    nowSeconds: NOW,
  };
}

function token(opts: Partial<Parameters<typeof signTestJwt>[1]> & { key?: typeof KEY } = {}) {
  return signTestJwt(opts.key ?? KEY, {
    issuer: TEAMS_ISSUER,
    audience: APP_ID,
    now: NOW,
    claims: { serviceurl: SERVICE_URL },
    ...opts,
  });
}

Deno.test("teamsAdapter.verify() accepts a Bot Framework token: metadata keys, issuer, audience, endorsement, serviceUrl", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    assertStrictEquals(
      await teamsAdapter.verify(request(teamsMessage("hi"), await token()), ENV),
      null,
    );
    // Cached: a second activity fetches nothing.
    assertStrictEquals(
      await teamsAdapter.verify(request(teamsMessage("again"), await token()), ENV),
      null,
    );
    assertEquals(calls.map((c) => c.url), [OPENID, JWKS]);
  });
});

Deno.test("teamsAdapter.verify() refuses wrong audience, issuer, expiry, key, endorsement and serviceurl claim without naming a secret", async () => {
  resetJwtCaches();
  await withFetch(platform(), async () => {
    const activity = teamsMessage("hi");
    const cases: [string, string | null, unknown][] = [
      ["no token", null, activity],
      ["not a JWT", "abc", activity],
      ["wrong audience", await token({ audience: "another-bot" }), activity],
      ["wrong issuer", await token({ issuer: "https://sts.windows.net/x/" }), activity],
      ["expired", await token({ lifetime: -600 }), activity],
      ["not yet valid", await token({ now: NOW + 3600 }), activity],
      ["another key, same kid", await token({ key: OTHER }), activity],
      ["unknown kid", await token({ kid: "bf-key-9" }), activity],
      ["key not endorsing msteams", await token({ key: UNENDORSED }), activity],
      [
        "serviceurl claim differs",
        await token({ claims: { serviceurl: "https://evil.test/" } }),
        activity,
      ],
      ["no serviceurl claim", await token({ claims: {} }), activity],
      [
        "activity names another serviceUrl",
        await token(),
        teamsMessage("hi", { serviceUrl: "https://evil.test/" }),
      ],
      ["activity names another channel", await token(), teamsMessage("hi", { channelId: "slack" })],
    ];
    for (const [name, jwt, body] of cases) {
      const refusal = await teamsAdapter.verify(request(body, jwt), ENV);
      assert(typeof refusal === "string", name);
      assert(!refusal.includes(PASSWORD) && !(jwt && refusal.includes(jwt)), name);
    }
  });
});

Deno.test("teamsAdapter.verify() refuses while the keys cannot be fetched, and tries again on the next activity", async () => {
  resetJwtCaches();
  let up = false;
  await withFetch(
    (call) => up ? platform()(call) : new Response("down", { status: 503 }),
    async () => {
      const refusal = await teamsAdapter.verify(
        request(teamsMessage("hi"), await token()),
        ENV,
      );
      assertEquals(refusal, { unavailable: "could not fetch the platform's signing keys" });
      up = true;
      assertStrictEquals(
        await teamsAdapter.verify(request(teamsMessage("hi"), await token()), ENV),
        null,
      );
    },
  );
});

Deno.test("teamsAdapter.parse() takes a personal chat's message with its reply target and sender", () => {
  const ingress = teamsAdapter.parse(
    { ...rawOf(teamsMessage("  hello bot  ")) },
    ENV,
  );
  assert(ingress.kind === "message");
  const { message } = ingress;
  assertStrictEquals(message.text, "hello bot");
  assertStrictEquals(message.sessionKey, "teams:a:1personal-chat");
  assertStrictEquals(message.deliveryKey, "teams:a:1personal-chat:1700000000001");
  assertEquals(message.reply, {
    platform: "teams",
    serviceUrl: SERVICE_URL,
    conversation: "a:1personal-chat",
    replyTo: "1700000000001",
  });
  assertEquals(message.sender, {
    platform: "teams",
    user: "aad-ada-0001",
    name: "Ada Lovelace",
    direct: true,
  });
});

Deno.test("teamsAdapter.parse() takes a channel message that mentions the bot, the mention removed, one session per thread", () => {
  const thread = "19:abc@thread.tacv2;messageid=1700000000000";
  const ingress = teamsAdapter.parse(
    rawOf(teamsMessage("<at>baton</at> what is new?", {
      conversation: { id: thread, conversationType: "channel", isGroup: true, name: "General" },
      entities: [
        {
          type: "mention",
          text: "<at>baton</at>",
          mentioned: { id: `28:${APP_ID}`, name: "baton" },
        },
        { type: "clientInfo", locale: "en-US" },
      ],
    })),
    ENV,
  );
  assert(ingress.kind === "message");
  assertStrictEquals(ingress.message.text, "what is new?");
  assertStrictEquals(ingress.message.sessionKey, `teams:${thread}`);
  assertStrictEquals(ingress.message.sender.direct, false);
});

Deno.test("teamsAdapter.parse() acknowledges conversationUpdate, other activities and unmentioned channel chatter", () => {
  const channel = { conversation: { id: "19:abc@thread.tacv2", conversationType: "channel" } };
  for (
    const activity of [
      { ...teamsMessage(""), type: "conversationUpdate", membersAdded: [{ id: "29:x" }] },
      { ...teamsMessage(""), type: "typing" },
      { ...teamsMessage(""), type: "invoke", name: "adaptiveCard/action" },
      teamsMessage("talking among ourselves", channel),
      teamsMessage("<at>baton</at>", {
        entities: [{ type: "mention", text: "<at>baton</at>", mentioned: { id: `28:${APP_ID}` } }],
      }),
    ]
  ) {
    assertStrictEquals(teamsAdapter.parse(rawOf(activity), ENV).kind, "respond");
  }
});

Deno.test("teamsAdapter.parse() answers a malformed message activity with PayloadError", () => {
  for (
    const body of [{ type: "message" }, teamsMessage("x", { serviceUrl: "javascript:alert(1)" })]
  ) {
    assert(assertThrows(() => teamsAdapter.parse(rawOf(body), ENV)) instanceof PayloadError);
  }
  const bytes = { ...rawOf({}), body: new Uint8Array([0xff]) };
  assert(assertThrows(() => teamsAdapter.parse(bytes, ENV)) instanceof PayloadError);
});

const TARGET: TeamsTarget = {
  platform: "teams",
  serviceUrl: SERVICE_URL,
  conversation: "19:abc@thread.tacv2;messageid=17",
  replyTo: "17",
};

Deno.test("teamsAdapter.send() posts to the activity's serviceUrl with a client-credentials token fetched once", async () => {
  resetJwtCaches();
  await withFetch(platform(), async (calls) => {
    let left = 0;
    assertEquals(await teamsAdapter.send(TARGET, "one", { ...PART, leaving: () => left++ }, ENV), {
      ok: true,
    });
    assertEquals(await teamsAdapter.send(TARGET, "two", PART, ENV), { ok: true });
    assertStrictEquals(left, 1);
    assertEquals(calls.map((c) => c.url), [
      TOKEN_URL,
      `${SERVICE_URL}v3/conversations/19%3Aabc%40thread.tacv2%3Bmessageid%3D17/activities`,
      `${SERVICE_URL}v3/conversations/19%3Aabc%40thread.tacv2%3Bmessageid%3D17/activities`,
    ]);
    const form = new URLSearchParams(String(calls[0].init.body));
    assertEquals(Object.fromEntries(form), {
      grant_type: "client_credentials",
      client_id: APP_ID,
      client_secret: PASSWORD,
      scope: "https://api.botframework.com/.default",
    });
    assertStrictEquals(calls[1].headers.get("authorization"), "Bearer bf-token-1");
    assertEquals(calls[1].body, {
      type: "message",
      text: "one",
      textFormat: "markdown",
      replyToId: "17",
    });
  });
});

Deno.test("teamsAdapter.send() makes a 429 retryable after Retry-After, and a 500 a send in doubt", async () => {
  resetJwtCaches();
  const answers = [
    new Response("{}", { status: 429, headers: { "retry-after": "3" } }),
    Response.json({ error: { code: "ServiceError" } }, { status: 500 }),
  ];
  await withFetch(platform((_, i) => answers[i]), async () => {
    const limited = await teamsAdapter.send(TARGET, "x", PART, ENV);
    assertEquals(limited, {
      ok: false,
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      message: "the Bot Connector API answered 429",
    });
    const failed = await teamsAdapter.send(TARGET, "x", PART, ENV);
    assert(!failed.ok && failed.uncertain === true && !failed.retryable, JSON.stringify(failed));
    assert(failed.message.includes("ServiceError"));
  });
});

Deno.test("teamsAdapter.send() fetches a new token after a 401, and a refused token request names no secret", async () => {
  resetJwtCaches();
  let tokens = 0;
  await withFetch((call, i) => {
    if (call.url === TOKEN_URL) {
      tokens++;
      return tokens === 3
        ? Response.json({ error: "invalid_client", error_description: `bad ${PASSWORD}` }, {
          status: 401,
        })
        : Response.json({ access_token: `bf-token-${tokens}`, expires_in: 3600 });
    }
    return i === 1
      ? new Response("{}", { status: 401 })
      : Response.json({ id: "1" }, { status: 201 });
  }, async (calls) => {
    const refused = await teamsAdapter.send(TARGET, "x", PART, ENV);
    assert(!refused.ok && refused.status === 401);
    assertEquals(await teamsAdapter.send(TARGET, "x", PART, ENV), { ok: true });
    assertStrictEquals(calls[3].headers.get("authorization"), "Bearer bf-token-2");
    resetJwtCaches();
    const bad = await teamsAdapter.send(TARGET, "x", PART, ENV);
    assert(!bad.ok && !bad.retryable, JSON.stringify(bad));
    assertStrictEquals(bad.message, "the Microsoft identity platform answered 401: invalid_client");
  });
});

Deno.test("teamsAdapter.send() takes its token from the tenant's endpoint when TEAMS_TENANT_ID is set", async () => {
  resetJwtCaches();
  const env = {
    TEAMS_APP_ID: APP_ID,
    TEAMS_APP_PASSWORD: PASSWORD,
    TEAMS_TENANT_ID: "contoso.onmicrosoft.com",
  };
  await withFetch(() => Response.json({ access_token: "t", expires_in: 3600 }), async (calls) => {
    await teamsAdapter.send(TARGET, "x", PART, env);
    assertStrictEquals(
      calls[0].url,
      "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
    );
  });
});

Deno.test("replyChannel() resends a Teams part in doubt behind the resend note (nothing to look up)", async () => {
  const channel = replyChannel([teamsAdapter], ENV);
  assertStrictEquals(
    await channel.inDoubt(TARGET, { index: 0, marker: "m" }, Date.now()),
    "resend_marked",
  );
  assertStrictEquals(
    await channel.inDoubt({ ...TARGET, serviceUrl: "ftp://x" }, { index: 0 }, 0),
    "resend",
  );
});

function rawOf(activity: unknown): RawRequest {
  return {
    headers: new Headers({ "content-type": "application/json" }),
    body: new TextEncoder().encode(JSON.stringify(activity)),
    url: "https://baton.test/webhooks/teams",
    nowSeconds: NOW,
  };
}

Deno.test("teamsAdapter.verify() leaves a well-signed body that is not an activity to parse (400), never trusting it", async () => {
  resetJwtCaches();
  await withFetch(platform(), async () => {
    const jwt = await token();
    const garbage = { ...request({}, jwt), body: new TextEncoder().encode("{not json") };
    assertStrictEquals(await teamsAdapter.verify(garbage, ENV), null);
    assert(assertThrows(() => teamsAdapter.parse(garbage, ENV)) instanceof PayloadError);
    const bare = request({ type: "message", text: "hi" }, jwt);
    assertStrictEquals(await teamsAdapter.verify(bare, ENV), null);
    assert(assertThrows(() => teamsAdapter.parse(bare, ENV)) instanceof PayloadError);
    const numeric = request(teamsMessage("hi", { channelId: 7 }), jwt);
    assert(await teamsAdapter.verify(numeric, ENV) !== null);
  });
});

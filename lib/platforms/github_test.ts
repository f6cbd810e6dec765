// Unit tests for lib/platforms/github.ts: signature, event filtering, addressing, send outcomes; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { type Ingress, PayloadError, type PlatformEnv, type SendResult } from "../chat/mod.ts";
import { githubAdapter, signGithubPayload } from "./github.ts";
import { withFetch } from "./_fetch_stub.ts";
import { setLogSink } from "../runtime/mod.ts";

const SECRET = "test-github-webhook-secret";
const ENV: PlatformEnv = {
  GITHUB_WEBHOOK_SECRET: SECRET,
  GITHUB_TOKEN: "ghp_test_token",
  GITHUB_BOT_LOGIN: "BatonBot",
  GITHUB_API_ROOT: "https://github.test/api/v3/",
};
const encoder = new TextEncoder();

const sign = (body: string, secret = SECRET) => signGithubPayload(secret, body);

function request(body: string, headers: Record<string, string> = {}) {
  return {
    headers: new Headers({ "content-type": "application/json", ...headers }),
    body: encoder.encode(body),
    url: "https://baton.test/webhooks/github",
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

function commentPayload(overrides: {
  action?: string;
  body?: string;
  login?: string;
  type?: string;
  association?: string;
  /** The comment's signed time (ISO 8601, as GitHub sends it); now when left out. */
  createdAt?: string;
} = {}) {
  const at = overrides.createdAt ?? new Date().toISOString();
  return {
    action: overrides.action ?? "created",
    issue: { number: 42, title: "Flaky build", pull_request: { url: "x" } },
    comment: {
      id: 9001,
      body: overrides.body ?? "@batonbot why is CI red?",
      user: { login: overrides.login ?? "octocat", id: 583231, type: overrides.type ?? "User" },
      created_at: at,
      updated_at: at,
      ...(overrides.association ? { author_association: overrides.association } : {}),
    },
    repository: { full_name: "octo-org/hello-world", name: "hello-world" },
    sender: { login: overrides.login ?? "octocat" },
  };
}

function parseComment(payload: unknown, event = "issue_comment"): Ingress {
  return githubAdapter.parse(
    request(JSON.stringify(payload), { "x-github-event": event, "x-github-delivery": "d-1" }),
    ENV,
  );
}

function ignored(ingress: Ingress): boolean {
  return ingress.kind === "respond" && ingress.status === 200;
}

Deno.test("githubAdapter.verify() accepts GitHub's documented test vector", async () => {
  const refusal = await githubAdapter.verify(
    request("Hello, World!", {
      "x-hub-signature-256":
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    }),
    { GITHUB_WEBHOOK_SECRET: "It's a Secret to Everybody" },
  );
  assertStrictEquals(refusal, null);
});

Deno.test("githubAdapter.verify() accepts a body signed with the secret, hex in either case", async () => {
  const body = JSON.stringify(commentPayload());
  const signature = await sign(body);
  assertStrictEquals(
    await githubAdapter.verify(request(body, { "x-hub-signature-256": signature }), ENV),
    null,
  );
  assertStrictEquals(
    await githubAdapter.verify(
      request(body, { "x-hub-signature-256": "sha256=" + signature.slice(7).toUpperCase() }),
      ENV,
    ),
    null,
  );
});

Deno.test("githubAdapter.verify() refuses a wrong secret, a changed body and a bad header without naming the secret", async () => {
  const body = JSON.stringify(commentPayload());
  const good = await sign(body);
  const cases: Record<string, string>[] = [
    { "x-hub-signature-256": await sign(body, "another-secret") },
    { "x-hub-signature-256": await sign(body + " ") },
    {},
    { "x-hub-signature-256": "" },
    { "x-hub-signature-256": good.slice(7) },
    { "x-hub-signature-256": "sha1=" + good.slice(7) },
    { "x-hub-signature-256": good.slice(0, -2) },
    { "x-hub-signature-256": good.slice(0, -2) + "zz" },
    { "x-hub-signature-256": good + "00" },
    { "x-hub-signature": "sha1=0123456789abcdef0123456789abcdef01234567" },
  ];
  for (const headers of cases) {
    const refusal = await githubAdapter.verify(request(body, headers), ENV);
    assert(typeof refusal === "string", `refused: ${JSON.stringify(headers)}`);
    assert(!refusal.includes(SECRET));
  }
});

Deno.test("githubAdapter.parse() answers ping with GitHub's zen", () => {
  const ingress = githubAdapter.parse(
    request(JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 }), {
      "x-github-event": "ping",
    }),
    ENV,
  );
  assertEquals(ingress, {
    kind: "respond",
    status: 200,
    body: { ok: true, zen: "Keep it logically awesome." },
  });
});

Deno.test("githubAdapter.parse() turns a created comment mentioning the bot into a message", () => {
  const ingress = parseComment(commentPayload());
  assertEquals(ingress, {
    kind: "message",
    message: {
      sessionKey: "github:octo-org/hello-world#42",
      deliveryKey: "github:comment:9001:created",
      // Seven days of redelivery and the hour a clock may be ahead.
      keyMemoryMs: (7 * 24 + 1) * 60 * 60 * 1000,
      text: "@batonbot why is CI red?",
      context: {
        platform: "github",
        session_key: "github:octo-org/hello-world#42",
        chat_id: "octo-org/hello-world",
        chat_name: "octo-org/hello-world",
        thread_id: "42",
        user_id: "583231",
        user_name: "octocat",
        message_id: "9001",
      },
      reply: { platform: "github", repo: "octo-org/hello-world", issue: 42 },
      sender: { platform: "github", user: "octocat", name: "octocat", direct: false },
    },
  });
});

Deno.test("githubAdapter.parse() matches the mention case-insensitively and only as a whole login", () => {
  const starts = (body: string) => parseComment(commentPayload({ body })).kind === "message";
  for (
    const body of [
      "@BATONBOT help",
      "hey @batonbot.",
      "(@BatonBot) please",
      "cc @batonbot, @octocat",
      "line one\n@batonbot: line two",
      "```js\nconst x = 1;\n```\n@batonbot explain this",
      "a lone ` backtick, @batonbot",
      "`code` then @batonbot",
      "```inline``` @batonbot",
      "> quoted\n\n@batonbot reply",
    ]
  ) assert(starts(body), body);
  for (
    const body of [
      "@batonbotx help",
      "@batonbot-dev help",
      "@batonbot_ help",
      "mail baton@batonbot.example",
      "@octo-org/batonbot team",
      "@batonbot/reviewers team",
      "no mention at all",
      "`@batonbot` in code",
      "```\n@batonbot in a fence\n```\nafter",
      "> @batonbot said this\n\nthanks",
      "~~~\n@batonbot\n~~~",
      "````\n```\n@batonbot\n```\n````",
      "``a ` @batonbot``",
    ]
  ) assert(!starts(body), body);
});

Deno.test("githubAdapter.parse() ignores the bot's own comments, other bots, edits and deletions", () => {
  assert(ignored(parseComment(commentPayload({ login: "batonbot" }))));
  assert(ignored(parseComment(commentPayload({ login: "BATONBOT", type: "User" }))));
  assert(ignored(parseComment(commentPayload({ login: "dependabot[bot]", type: "Bot" }))));
  assert(ignored(parseComment(commentPayload({ action: "edited" }))));
  assert(ignored(parseComment(commentPayload({ action: "deleted" }))));
});

Deno.test("githubAdapter.parse() ignores other events and payloads lacking what a turn needs", () => {
  assert(ignored(parseComment(commentPayload(), "issues")));
  assert(ignored(parseComment(commentPayload(), "pull_request_review_comment")));
  assert(ignored(parseComment({ zen: "x" }, "push")));
  assert(ignored(parseComment({ action: "created" })));
  const noEvent = githubAdapter.parse(request(JSON.stringify(commentPayload())), ENV);
  assert(ignored(noEvent));
});

Deno.test("githubAdapter.parse() rejects a body that is not JSON with PayloadError", () => {
  const notJson = assertThrows(() =>
    githubAdapter.parse(request("{not json", { "x-github-event": "issue_comment" }), ENV)
  );
  assert(notJson instanceof PayloadError);
  const noPayload = assertThrows(() =>
    githubAdapter.parse(
      request("other=1", {
        "x-github-event": "issue_comment",
        "content-type": "application/x-www-form-urlencoded",
      }),
      ENV,
    )
  );
  assert(noPayload instanceof PayloadError);
});

Deno.test("githubAdapter.parse() reads a hook configured with the form-encoded content type", () => {
  const body = "payload=" + encodeURIComponent(JSON.stringify(commentPayload()));
  const ingress = githubAdapter.parse(
    request(body, {
      "x-github-event": "issue_comment",
      "x-github-delivery": "d-2",
      "content-type": "application/x-www-form-urlencoded",
    }),
    ENV,
  );
  assertStrictEquals(ingress.kind, "message");
  if (ingress.kind === "message") {
    assertStrictEquals(ingress.message.deliveryKey, "github:comment:9001:created");
  }
});

Deno.test("githubAdapter.parse() keys a comment by its signed id and action, whatever X-GitHub-Delivery says", async () => {
  // X-GitHub-Delivery is outside the signature: anyone holding one signed body can send it again
  // under fresh ids. The key must come from the body GitHub signed, so each resend is one message.
  const body = JSON.stringify(commentPayload({ body: "@batonbot /approve always" }));
  const signature = await sign(body);
  const keys = ["d-1", "d-2", "", crypto.randomUUID()].map((delivery) => {
    const ingress = githubAdapter.parse(
      request(body, {
        "x-github-event": "issue_comment",
        "x-hub-signature-256": signature,
        ...(delivery ? { "x-github-delivery": delivery } : {}),
      }),
      ENV,
    );
    assert(ingress.kind === "message", JSON.stringify(ingress));
    return ingress.message.deliveryKey;
  });
  assertEquals(new Set(keys), new Set(["github:comment:9001:created"]));
  // Another comment is another message.
  const other = commentPayload();
  const ingress = parseComment({ ...other, comment: { ...other.comment, id: 9002 } });
  assert(ingress.kind === "message");
  assertStrictEquals(ingress.message.deliveryKey, "github:comment:9002:created");
});

Deno.test("githubAdapter.parse() refuses a comment older than GitHub's 7 days of redelivery: acknowledged, logged, no turn", () => {
  // GitHub signs the body, with no delivery time: a captured `/approve always` comment verifies for
  // ever. Its signed created_at ages it: deliveries can be redelivered for 3 days on github.com,
  // 7 on GitHub Enterprise Server; older, it can only be a replay.
  const day = 24 * 60 * 60 * 1000;
  const aged = (ageMs: number) =>
    commentPayload({
      body: "@batonbot /approve always",
      createdAt: new Date(Date.now() - ageMs).toISOString(),
    });
  const lines: string[] = [];
  const restore = setLogSink((_level, line) => lines.push(line));
  try {
    for (const ageMs of [7 * day + 60_000, 30 * day, 365 * day]) {
      assert(ignored(parseComment(aged(ageMs))), `${ageMs} ms old`);
    }
  } finally {
    restore();
  }
  assertStrictEquals(lines.filter((l) => l.includes("older than")).length, 3, lines.join("\n"));
  // Fresh, a redelivery days later, or stamped ahead of this clock: it runs.
  for (const ageMs of [0, 2 * day, 7 * day - 60_000, -60_000]) {
    assertStrictEquals(parseComment(aged(ageMs)).kind, "message", `${ageMs} ms old`);
  }
  // The comment's id and action are remembered as long, past the inbox's day (and an hour more,
  // for GitHub's clock ahead of baton's).
  const fresh = parseComment(aged(0));
  assert(fresh.kind === "message");
  assert((fresh.message.keyMemoryMs ?? 0) >= 7 * day + 60 * 60_000);
});

function send(text = "hello"): Promise<SendResult> {
  return githubAdapter.send(
    { platform: "github", repo: "octo-org/hello-world", issue: 42 },
    text,
    { index: 0, count: 1 },
    ENV,
  );
}

Deno.test("githubAdapter.send() posts one issue comment with GitHub's headers", async () => {
  const seen: { url: string; init: RequestInit }[] = [];
  await withFetch(({ url, init }) => {
    seen.push({ url, init });
    return Response.json({ id: 1 }, { status: 201 });
  }, async () => {
    assertEquals(await send("the answer"), { ok: true });
  });
  assertStrictEquals(seen.length, 1);
  assertStrictEquals(
    seen[0].url,
    "https://github.test/api/v3/repos/octo-org/hello-world/issues/42/comments",
  );
  const headers = new Headers(seen[0].init.headers);
  assertStrictEquals(seen[0].init.method, "POST");
  assertStrictEquals(headers.get("authorization"), "Bearer ghp_test_token");
  assertStrictEquals(headers.get("accept"), "application/vnd.github+json");
  assertStrictEquals(headers.get("x-github-api-version"), "2022-11-28");
  assertStrictEquals(headers.get("user-agent"), "baton");
  assertEquals(JSON.parse(String(seen[0].init.body)), { body: "the answer" });
});

Deno.test("githubAdapter.send() makes 429 and secondary-limit 403s retryable with their wait", async () => {
  await withFetch(
    () => new Response(null, { status: 429, headers: { "retry-after": "3" } }),
    async () => {
      const result = await send();
      assertEquals({ ...result, message: "" }, {
        ok: false,
        status: 429,
        retryable: true,
        retryAfterMs: 3000,
        message: "",
      });
    },
  );
  await withFetch(
    () => new Response(null, { status: 403, headers: { "retry-after": "0" } }),
    async () => {
      const result = await send();
      assert(!result.ok && result.retryable && result.retryAfterMs === 0);
    },
  );
  const reset = Math.floor(Date.now() / 1000) + 30;
  await withFetch(
    () =>
      new Response(null, {
        status: 403,
        headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
      }),
    async () => {
      const result = await send();
      assert(!result.ok && result.retryable);
      assert(result.retryAfterMs! > 25_000 && result.retryAfterMs! <= 30_000);
    },
  );
});

Deno.test("githubAdapter.send() does not retry other failures, which could post twice", async () => {
  await withFetch(
    () => Response.json({ message: "Resource not accessible by integration" }, { status: 403 }),
    async () => {
      const result = await send();
      assert(!result.ok && !result.retryable && result.status === 403);
      assert(result.message.includes("Resource not accessible by integration"));
      assert(!result.message.includes("ghp_test_token"));
    },
  );
  await withFetch(() => new Response("oops", { status: 502 }), async () => {
    const result = await send();
    assert(!result.ok && !result.retryable && result.status === 502);
  });
  await withFetch(() => Promise.reject(new TypeError("connection reset")), async () => {
    const result = await send();
    assert(!result.ok && !result.retryable && result.status === 0);
  });
});

Deno.test("githubAdapter.parse() names the author and their author_association, never as a direct chat", () => {
  const ingress = parseComment(commentPayload({ login: "OctoCat", association: "COLLABORATOR" }));
  assert(ingress.kind === "message");
  assertEquals(ingress.message.sender, {
    platform: "github",
    user: "OctoCat",
    name: "OctoCat",
    direct: false,
    association: "COLLABORATOR",
  });
});

Deno.test("githubAdapter.parse() delivers a bare approval answer without a mention, as the command alone", () => {
  const text = (body: string) => {
    const ingress = parseComment(commentPayload({ body }));
    return ingress.kind === "message" ? ingress.message.text : null;
  };
  const answers: [string, string][] = [
    ["/approve", "/approve"],
    ["  /APPROVE  \n", "/approve"],
    ["/approve session", "/approve session"],
    ["/approve   always", "/approve always"],
    ["/deny", "/deny"],
    ["@BatonBot /approve", "/approve"],
    ["@batonbot, /approve always", "/approve always"],
    ["@batonbot\n/deny", "/deny"],
  ];
  for (const [body, command] of answers) assertStrictEquals(text(body), command, body);
  // Nothing else goes through without a mention: not other commands, words, or text around one.
  for (
    const body of [
      "/approve please",
      "/approve once",
      "/denyall",
      "/stop",
      "/status",
      "yes",
      "no",
      "I'd /approve this",
      "> /approve",
      "@octocat /approve",
      "@batonbotx /approve",
    ]
  ) assert(ignored(parseComment(commentPayload({ body }))), body);
  // With the mention, anything else is an ordinary message, its text as written.
  assertStrictEquals(text("@batonbot /approve please"), "@batonbot /approve please");
  // A bot's own "/approve" is still a bot's comment.
  assert(ignored(parseComment(commentPayload({ body: "/approve", type: "Bot", login: "ci" }))));
});

// Unit tests for lib/platforms/slack.ts: chat.postMessage sends and their outcomes over a stubbed fetch; Deno.
import { assert, assertEquals } from "@std/assert";
import { slackAdapter } from "./slack.ts";
import { withFetch } from "./_fetch_stub.ts";
import { ENV, TOKEN } from "./_slack_fixtures.ts";

const PART = { index: 0, count: 1 };

Deno.test("slackAdapter.send() posts to chat.postMessage with the bot token, threaded when the target has a thread", async () => {
  await withFetch(() => Response.json({ ok: true, ts: "1.2" }), async (requests) => {
    const env = { ...ENV, SLACK_API_ROOT: "http://slack.test/api/" };
    const threaded = { platform: "slack", channel: "C1", thread_ts: "1.1" } as const;
    assertEquals(await slackAdapter.send(threaded, "hello", PART, env), { ok: true });
    assertEquals(await slackAdapter.send({ platform: "slack", channel: "D1" }, "dm", PART, env), {
      ok: true,
    });
    assertEquals(requests.map((r) => r.url), [
      "http://slack.test/api/chat.postMessage",
      "http://slack.test/api/chat.postMessage",
    ]);
    assertEquals(requests[0].headers.get("authorization"), `Bearer ${TOKEN}`);
    assertEquals(requests[0].body, { channel: "C1", text: "hello", thread_ts: "1.1" });
    assertEquals(requests[1].body, { channel: "D1", text: "dm" });
  });
});

Deno.test("slackAdapter.send() defaults to https://slack.com/api", async () => {
  await withFetch(() => Response.json({ ok: true }), async (requests) => {
    await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(requests[0].url, "https://slack.com/api/chat.postMessage");
  });
});

Deno.test("slackAdapter.send() treats HTTP 200 ok:false as a final failure naming the error code", async () => {
  await withFetch(() => Response.json({ ok: false, error: "channel_not_found" }), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(result, {
      ok: false,
      status: 200,
      retryable: false,
      message: "Slack chat.postMessage failed: channel_not_found",
    });
  });
  await withFetch(() => new Response("<html>oops</html>"), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assert(!result.ok && result.message === "Slack chat.postMessage failed: unknown_error");
  });
});

Deno.test("slackAdapter.send() makes a 429 retryable after Retry-After seconds", async () => {
  await withFetch(
    () =>
      Response.json({ ok: false, error: "ratelimited" }, {
        status: 429,
        headers: { "retry-after": "3" },
      }),
    async () => {
      const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
      assertEquals(result, {
        ok: false,
        status: 429,
        retryable: true,
        retryAfterMs: 3000,
        message: "Slack chat.postMessage answered HTTP 429",
      });
    },
  );
});

Deno.test("slackAdapter.send() leaves a 5xx or a network error in doubt, never blindly retryable, and never shows the token", async () => {
  await withFetch(() => new Response("bad gateway", { status: 502 }), async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assert(!result.ok && !result.retryable && result.uncertain && result.status === 502);
    assert(!JSON.stringify(result).includes(TOKEN));
  });
  await withFetch(() => {
    throw new TypeError(`connect failed with ${TOKEN}`);
  }, async () => {
    const result = await slackAdapter.send({ platform: "slack", channel: "C1" }, "x", PART, ENV);
    assertEquals(result, {
      ok: false,
      status: 0,
      retryable: false,
      uncertain: true,
      message: "could not reach the Slack API",
    });
  });
});

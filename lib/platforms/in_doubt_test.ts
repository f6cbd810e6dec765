// Unit tests of how each platform resolves a part in doubt (markers sent, look-backs read, resend rules); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { PART_ROOM, replyChannel, type ReplyTarget, RESEND_NOTE } from "../chat/mod.ts";
import { withFetch } from "./_fetch_stub.ts";
import { githubAdapter, partMarkerComment } from "./github.ts";
import { platformAdapters } from "./mod.ts";
import { slackAdapter } from "./slack.ts";
import { PART_EVENT_TYPE } from "./slack_find_part.ts";

/** Every webhook platform's adapter, loaded. */
const ADAPTERS = await platformAdapters();

const ENV = {
  TELEGRAM_BOT_TOKEN: "1:secret",
  SLACK_BOT_TOKEN: "xoxb-test",
  GITHUB_TOKEN: "ghp_test",
  DISCORD_APPLICATION_ID: "1",
};
const T0 = Date.UTC(2026, 10, 23, 12);
const ISSUE = { platform: "github" as const, repo: "octo/hello", issue: 3 };
const THREAD = { platform: "slack" as const, channel: "C1", thread_ts: "1700000000.000100" };
const DM = { platform: "slack" as const, channel: "D1" };

Deno.test("githubAdapter.send() ends each comment with its part's invisible marker", async () => {
  await withFetch(() => Response.json({ id: 1 }, { status: 201 }), async (calls) => {
    await githubAdapter.send(ISSUE, "hello", { index: 0, count: 1, marker: "o7-abc" }, ENV);
    assertEquals(calls[0].body, { body: `hello\n\n${partMarkerComment("o7-abc")}` });
    assertEquals(partMarkerComment("o7-abc"), "<!-- baton:part=o7-abc -->");
  });
});

Deno.test("githubAdapter.findPart() lists the issue's comments since the attempt and looks for the marker", async () => {
  const comments = [{ body: "other" }, { body: `hi\n\n${partMarkerComment("o7-abc")}` }];
  await withFetch(() => Response.json(comments), async (calls) => {
    assertStrictEquals(await githubAdapter.findPart!(ISSUE, "o7-abc", T0, ENV), true);
    assertStrictEquals(await githubAdapter.findPart!(ISSUE, "o8-abc", T0, ENV), false);
    const url = new URL(calls[0].url);
    assertEquals(url.pathname, "/repos/octo/hello/issues/3/comments");
    assertEquals(url.searchParams.get("since"), new Date(T0).toISOString());
    assertEquals(calls[0].headers.get("authorization"), "Bearer ghp_test");
  });
  // A full page without it: the next page is read.
  const full = Array.from({ length: 100 }, () => ({ body: "x" }));
  await withFetch((_call, i) => Response.json(i === 0 ? full : comments), async (calls) => {
    assertStrictEquals(await githubAdapter.findPart!(ISSUE, "o7-abc", T0, ENV), true);
    assertEquals(new URL(calls[1].url).searchParams.get("page"), "2");
  });
  // Could not ask: null, never "absent".
  await withFetch(() => new Response("no", { status: 502 }), async () => {
    assertStrictEquals(await githubAdapter.findPart!(ISSUE, "o7-abc", T0, ENV), null);
  });
});

Deno.test("slackAdapter.send() names its part in message metadata", async () => {
  await withFetch(() => Response.json({ ok: true }), async (calls) => {
    await slackAdapter.send(THREAD, "hello", { index: 0, count: 1, marker: "o7-abc" }, ENV);
    assertEquals(calls[0].body.metadata, {
      event_type: PART_EVENT_TYPE,
      event_payload: { part: "o7-abc" },
    });
  });
});

Deno.test("slackAdapter.findPart() reads the thread or the DM's history with metadata", async () => {
  const messages = [
    { ts: "1.1", text: "a" },
    {
      ts: "1.2",
      text: "b",
      metadata: { event_type: PART_EVENT_TYPE, event_payload: { part: "o7-abc" } },
    },
  ];
  await withFetch(() => Response.json({ ok: true, messages }), async (calls) => {
    assertStrictEquals(await slackAdapter.findPart!(THREAD, "o7-abc", T0, ENV), true);
    assertStrictEquals(await slackAdapter.findPart!(DM, "o9-abc", T0, ENV), false);
    const replies = new URL(calls[0].url);
    assertEquals(replies.pathname, "/api/conversations.replies");
    assertEquals(replies.searchParams.get("ts"), THREAD.thread_ts);
    assertEquals(replies.searchParams.get("include_all_metadata"), "true");
    assertEquals(replies.searchParams.get("oldest"), (T0 / 1000).toFixed(6));
    assertEquals(new URL(calls[1].url).pathname, "/api/conversations.history");
  });
  await withFetch(() => Response.json({ ok: true, messages: [], has_more: true }), async () => {
    assertStrictEquals(await slackAdapter.findPart!(DM, "o7-abc", T0, ENV), null);
  });
  await withFetch(() => Response.json({ ok: false, error: "missing_scope" }), async () => {
    assertStrictEquals(await slackAdapter.findPart!(DM, "o7-abc", T0, ENV), null);
  });
});

Deno.test("replyChannel().inDoubt() looks where it can, resends Discord's edit, and marks or skips the rest", async () => {
  const found = (present: boolean) => () =>
    Response.json(
      present ? [{ body: partMarkerComment("o7-abc") }] : [],
    );
  const channel = replyChannel(ADAPTERS, ENV);
  const part = { index: 1, marker: "o7-abc" };
  await withFetch(found(true), async () => {
    assertEquals(await channel.inDoubt(ISSUE, part, T0), "delivered");
  });
  await withFetch(found(false), async () => {
    assertEquals(await channel.inDoubt(ISSUE, part, T0), "resend");
  });
  await withFetch(() => new Response("", { status: 500 }), async () => {
    assertEquals(await channel.inDoubt(ISSUE, part, T0), "resend_marked");
  });
  const telegram: ReplyTarget = { platform: "telegram", chat_id: 1 };
  const discord: ReplyTarget = { platform: "discord", application_id: "1", token: "t" };
  assertEquals(await channel.inDoubt(telegram, part, T0), "resend_marked");
  assertEquals(await channel.inDoubt(discord, { index: 0 }, T0), "resend");
  assertEquals(await channel.inDoubt(discord, { index: 1 }, T0), "resend_marked");
  const skipping = replyChannel(ADAPTERS, { ...ENV, REPLY_IN_DOUBT: "skip" });
  assertEquals(await skipping.inDoubt(telegram, part, T0), "skip");
  assertEquals(await skipping.inDoubt(discord, { index: 0 }, T0), "resend");
});

Deno.test("replyChannel().split() leaves room for the resend note and the GitHub marker", () => {
  assert(RESEND_NOTE.length <= PART_ROOM);
  const channel = replyChannel(ADAPTERS, ENV);
  const telegram: ReplyTarget = { platform: "telegram", chat_id: 1 };
  for (const part of channel.split(telegram, "a".repeat(10_000))) {
    assert((RESEND_NOTE + part).length <= 4096, `${part.length}`);
  }
  // GitHub's marker fits too.
  for (const part of channel.split(ISSUE, "a".repeat(200_000))) {
    assert(`${part}\n\n${partMarkerComment("o123456789-" + "z".repeat(9))}`.length <= 65_536);
  }
});

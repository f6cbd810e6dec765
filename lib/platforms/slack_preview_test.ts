// Unit tests of Slack previews (lib/platforms/slack_preview.ts through slackAdapter): one message posted, edited, then edited into the reply; Deno.
import { assertEquals } from "@std/assert";
import { slackAdapter } from "./slack.ts";
import { SLACK_PREVIEW_MARK } from "./slack_preview.ts";
import { PART_EVENT_TYPE } from "./slack_find_part.ts";
import { withFetch } from "./_fetch_stub.ts";
import { ENV } from "./_slack_fixtures.ts";

const env = { ...ENV, SLACK_API_ROOT: "http://slack.test/api" };
const thread = { platform: "slack", channel: "C1", thread_ts: "1.1" } as const;
const path = (url: string) => url.replace("http://slack.test/api/", "");

Deno.test("slackAdapter.preview() posts one marked message, names it by its ts, then edits it", async () => {
  await withFetch(() => Response.json({ ok: true, ts: "1700.000200" }), async (requests) => {
    assertEquals(await slackAdapter.preview!(thread, "Hel", 7, env), { handle: "1700.000200" });
    assertEquals(await slackAdapter.preview!(thread, "Hello", 7, env, "1700.000200"), "shown");
    assertEquals(requests.map((r) => path(r.url)), ["chat.postMessage", "chat.update"]);
    assertEquals(requests[0].body, {
      channel: "C1",
      text: `Hel${SLACK_PREVIEW_MARK}`,
      thread_ts: "1.1",
    });
    assertEquals(requests[1].body, {
      channel: "C1",
      ts: "1700.000200",
      text: `Hello${SLACK_PREVIEW_MARK}`,
    });
  });
});

Deno.test("slackAdapter.preview() stops on a 429, and makes no second message when Slack names none", async () => {
  await withFetch(
    () => new Response("{}", { status: 429, headers: { "retry-after": "3" } }),
    async () => {
      assertEquals(await slackAdapter.preview!(thread, "x", 1, env), "rate_limited");
    },
  );
  await withFetch(() => Response.json({ ok: true }), async () => {
    assertEquals(await slackAdapter.preview!(thread, "x", 1, env), "unsupported");
  });
  await withFetch(() => Response.json({ ok: false, error: "not_in_channel" }), async () => {
    assertEquals(await slackAdapter.preview!(thread, "x", 1, env), "failed");
  });
});

Deno.test("slackAdapter.send() edits the preview it replaces into the part, with the part's marker", async () => {
  await withFetch(() => Response.json({ ok: true, ts: "1700.000200" }), async (requests) => {
    let left = 0;
    const part = {
      index: 0,
      count: 1,
      marker: "o9-abc",
      replaces: "1700.000200",
      leaving: () => left++,
    };
    assertEquals(await slackAdapter.send(thread, "Hello there", part, env), { ok: true });
    assertEquals(left, 1);
    assertEquals(requests.map((r) => path(r.url)), ["chat.update"]);
    assertEquals(requests[0].body, {
      channel: "C1",
      ts: "1700.000200",
      text: "Hello there",
      metadata: { event_type: PART_EVENT_TYPE, event_payload: { part: "o9-abc" } },
    });
  });
});

Deno.test("slackAdapter.send() posts the part as a new message when its preview is gone, and retries an edit's 5xx", async () => {
  await withFetch(
    (call) =>
      path(call.url) === "chat.update"
        ? Response.json({ ok: false, error: "message_not_found" })
        : Response.json({ ok: true, ts: "1700.000300" }),
    async (requests) => {
      const part = { index: 0, count: 1, replaces: "1700.000200" };
      assertEquals(await slackAdapter.send(thread, "Hello", part, env), { ok: true });
      assertEquals(requests.map((r) => path(r.url)), ["chat.update", "chat.postMessage"]);
    },
  );
  await withFetch(() => new Response("", { status: 502 }), async () => {
    const part = { index: 0, count: 1, replaces: "1700.000200" };
    const result = await slackAdapter.send(thread, "Hello", part, env);
    // An edit cannot post twice: retryable, never in doubt.
    assertEquals(result.ok, false);
    assertEquals(!result.ok && [result.retryable, result.uncertain], [true, undefined]);
  });
});

Deno.test("slackAdapter.endPreview() edits a stopped turn's preview to the notice, deletes a paused one's", async () => {
  await withFetch(() => Response.json({ ok: true }), async (requests) => {
    await slackAdapter.endPreview!(thread, "(stopped)", env, "1700.000200");
    await slackAdapter.endPreview!(thread, null, env, "1700.000200");
    await slackAdapter.endPreview!(thread, "(stopped)", env);
    assertEquals(requests.map((r) => [path(r.url), r.body]), [
      ["chat.update", { channel: "C1", ts: "1700.000200", text: "(stopped)" }],
      ["chat.delete", { channel: "C1", ts: "1700.000200" }],
    ]);
  });
});

// Unit tests of files out on Slack, Discord, WhatsApp, LINE and Twilio (each adapter's sendFile request shape, fallbacks, and how a file part in doubt is resolved); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { type OutgoingFile, replyChannel, type ReplyTarget } from "../chat/mod.ts";
import { memoryMediaStore } from "../media/mod.ts";
import { withFetch } from "./_fetch_stub.ts";
import { discordAdapter } from "./discord.ts";
import { lineAdapter } from "./line.ts";
import { platformAdapters } from "./mod.ts";
import { slackAdapter } from "./slack.ts";
import { twilioAdapter } from "./twilio.ts";
import { whatsappAdapter } from "./whatsapp.ts";

/** Every webhook platform's adapter, loaded. */
const ADAPTERS = await platformAdapters();

const ENV = {
  SLACK_BOT_TOKEN: "xoxb-test",
  DISCORD_APPLICATION_ID: "1",
  WHATSAPP_ACCESS_TOKEN: "wa-token",
  LINE_CHANNEL_ACCESS_TOKEN: "line-token",
  TWILIO_ACCOUNT_SID: "AC" + "0".repeat(32),
  TWILIO_AUTH_TOKEN: "tw-token",
};
const T0 = Date.UTC(2026, 10, 23, 12);
const LINK = "https://baton.example.com/media/s/abc?exp=1&sig=00";
const PNG: OutgoingFile = {
  id: "s/abc",
  type: "image/png",
  size: 4,
  name: "chart.png",
  bytes: new Uint8Array([137, 80, 78, 71]),
  url: LINK,
};
const PDF: OutgoingFile = { ...PNG, type: "application/pdf", name: "report.pdf" };
const PART = { index: 0, count: 2, marker: "o7-abc" };

Deno.test("replyChannel().inDoubt() never looks for a file part by its marker: a file share carries none", async () => {
  const channel = replyChannel(ADAPTERS, ENV);
  const slack: ReplyTarget = { platform: "slack", channel: "D1" };
  const file = { id: "s/abc", type: "image/png", size: 4 };
  await withFetch(() => Response.json({ ok: true, messages: [] }), async (calls) => {
    assertEquals(
      await channel.inDoubt(slack, { index: 0, marker: "o7-abc", file }, T0),
      "resend_marked",
    );
    assertStrictEquals(calls.length, 0, "the history was read for a marker a file cannot carry");
  });
  const skipping = replyChannel(ADAPTERS, { ...ENV, REPLY_IN_DOUBT: "skip" });
  await withFetch(() => Response.json({ ok: true, messages: [] }), async () => {
    assertEquals(await skipping.inDoubt(slack, { index: 0, marker: "o7-abc", file }, T0), "skip");
  });
});

Deno.test("slackAdapter.sendFile() reserves an upload URL (form), uploads the bytes there without the token, then shares it into the thread", async () => {
  const answers = [
    Response.json({ ok: true, upload_url: "https://files.slack.test/upload/v1/X", file_id: "F1" }),
    new Response("OK - 4"),
    Response.json({ ok: true, files: [{ id: "F1" }] }),
  ];
  const target = { platform: "slack" as const, channel: "C1", thread_ts: "1700000000.000100" };
  let left = 0;
  await withFetch((_c, i) => answers[i], async (calls) => {
    const part = { ...PART, leaving: () => void left++ };
    const result = await slackAdapter.sendFile!(target, PNG, "here", part, ENV);
    assertEquals(result, { ok: true });
    assertEquals(calls.map((c) => c.url), [
      "https://slack.com/api/files.getUploadURLExternal",
      "https://files.slack.test/upload/v1/X",
      "https://slack.com/api/files.completeUploadExternal",
    ]);
    const reserve = new URLSearchParams(calls[0].body);
    assertEquals(Object.fromEntries(reserve), { filename: "chart.png", length: "4" });
    assertStrictEquals(calls[0].headers.get("authorization"), "Bearer xoxb-test");
    assertStrictEquals(calls[1].headers.get("authorization"), null);
    assertEquals(calls[1].init.body, PNG.bytes);
    const complete = Object.fromEntries(new URLSearchParams(calls[2].body));
    assertEquals(JSON.parse(complete.files), [{ id: "F1", title: "chart.png" }]);
    assertEquals(complete.channel_id, "C1");
    assertEquals(complete.thread_ts, "1700000000.000100");
    assertEquals(complete.initial_comment, "here");
    // Marked as in doubt only as the share leaves.
    assertStrictEquals(left, 1);
  });
});

Deno.test("slackAdapter.sendFile() retries a failed upload (nothing shown yet) and never marks the part", async () => {
  await withFetch(
    (_c, i) =>
      i === 0
        ? Response.json({ ok: true, upload_url: "https://files.slack.test/u", file_id: "F2" })
        : new Response("busy", { status: 503 }),
    async (calls) => {
      let left = 0;
      const result = await slackAdapter.sendFile!(
        { platform: "slack", channel: "D1" },
        PNG,
        "",
        { ...PART, leaving: () => void left++ },
        ENV,
      );
      assertEquals(result.ok, false);
      assert(!result.ok && result.retryable && !result.uncertain, JSON.stringify(result));
      assertStrictEquals(left, 0);
      assertStrictEquals(calls.length, 2);
    },
  );
});

Deno.test("discordAdapter.sendFile() puts the file on @original for part 0 and in a follow-up after, as multipart files[0] + payload_json", async () => {
  const target = { platform: "discord" as const, application_id: "1", token: "tok" };
  await withFetch(() => Response.json({ id: "m1" }), async (calls) => {
    await discordAdapter.sendFile!(target, PNG, "", PART, ENV);
    await discordAdapter.sendFile!(target, PDF, "see", { ...PART, index: 1 }, ENV);
    assertEquals(calls.map((c) => [c.method, new URL(c.url).pathname]), [
      ["PATCH", "/api/v10/webhooks/1/tok/messages/@original"],
      ["POST", "/api/v10/webhooks/1/tok"],
    ]);
    const form = calls[0].init.body as FormData;
    const payload = JSON.parse(form.get("payload_json") as string);
    assertEquals(payload.attachments, [{ id: 0, filename: "chart.png" }]);
    assertStrictEquals(payload.content, "");
    const file = form.get("files[0]") as File;
    assertStrictEquals(file.name, "chart.png");
    assertEquals(new Uint8Array(await file.arrayBuffer()), PNG.bytes);
    assertStrictEquals(calls[0].headers.get("content-type"), null);
    const second = JSON.parse((calls[1].init.body as FormData).get("payload_json") as string);
    assertStrictEquals(second.content, "see");
  });
});

Deno.test("whatsappAdapter.sendFile() sends an image or a document by its signed link, else the note in text", async () => {
  const target = { platform: "whatsapp" as const, phone_number_id: "P1", to: "15550001" };
  await withFetch(() => Response.json({ messages: [{ id: "wamid.1" }] }), async (calls) => {
    await whatsappAdapter.sendFile!(target, PNG, "cap", PART, ENV);
    await whatsappAdapter.sendFile!(target, PDF, "", { ...PART, index: 1 }, ENV);
    await whatsappAdapter.sendFile!(target, { ...PNG, url: null }, "", { ...PART, index: 1 }, ENV);
    assertEquals(calls[0].body.image, { link: LINK, caption: "cap" });
    assertStrictEquals(calls[0].body.type, "image");
    assertEquals(calls[1].body.document, { link: LINK, filename: "report.pdf" });
    assertStrictEquals(calls[2].body.type, "text");
    assertStrictEquals(
      calls[2].body.text.body,
      "📎 chart.png (image/png, 4 B) — files cannot be shown here",
    );
  });
});

Deno.test("lineAdapter.sendFile() pushes an image message by its signed link (the caption after it), other files as their link", async () => {
  const target = { platform: "line" as const, to: "U" + "a".repeat(32) };
  await withFetch(() => Response.json({}), async (calls) => {
    await lineAdapter.sendFile!(target, PNG, "", PART, ENV);
    await lineAdapter.sendFile!(target, PNG, "cap", PART, ENV);
    await lineAdapter.sendFile!(target, PDF, "", PART, ENV);
    assertEquals(calls[0].body.messages, [
      { type: "image", originalContentUrl: LINK, previewImageUrl: LINK },
    ]);
    assertEquals(calls[1].body.messages.map((m: { type: string }) => m.type), ["image", "text"]);
    assertEquals(calls[2].body.messages, [
      { type: "text", text: `📎 report.pdf (application/pdf, 4 B): ${LINK}` },
    ]);
    assert(calls.every((c) => c.headers.get("x-line-retry-key")), "every push has its retry key");
  });
});

Deno.test("twilioAdapter.sendFile() sends an image as MMS MediaUrl = the signed link, other files as their link", async () => {
  const target = { platform: "twilio" as const, from: "+15550000", to: "+15550001" };
  await withFetch(() => Response.json({ sid: "SM1" }, { status: 201 }), async (calls) => {
    await twilioAdapter.sendFile!(target, PNG, "", PART, ENV);
    await twilioAdapter.sendFile!(target, PDF, "cap", PART, ENV);
    const mms = Object.fromEntries(new URLSearchParams(calls[0].body));
    assertEquals(mms, { To: "+15550001", From: "+15550000", MediaUrl: LINK });
    const text = Object.fromEntries(new URLSearchParams(calls[1].body));
    assertStrictEquals(text.Body, `📎 report.pdf (application/pdf, 4 B): ${LINK}\n\ncap`);
    assertStrictEquals(text.MediaUrl, undefined);
  });
});

Deno.test("replyChannel() reads no bytes from MEDIA for a file an adapter sends by its signed link (WhatsApp, LINE, Twilio); Slack's upload still reads them", async () => {
  const store = memoryMediaStore();
  await store.put(PNG.id, PNG.bytes, PNG.type);
  let gets = 0;
  const counted = { ...store, get: (key: string) => (gets++, store.get(key)) };
  const channel = replyChannel(ADAPTERS, ENV, {
    store: counted,
    link: () => Promise.resolve(LINK),
  });
  const file = { id: PNG.id, type: PNG.type, size: PNG.size, name: PNG.name };
  const targets: ReplyTarget[] = [
    { platform: "whatsapp", phone_number_id: "1001", to: "15550001" },
    { platform: "line", to: "U" + "a".repeat(32) },
    { platform: "twilio", from: "+15550000", to: "+15550001" },
  ];
  await withFetch(
    () => Response.json({ messages: [{ id: "wamid.1" }], sid: "SM1" }),
    async (calls) => {
      for (const target of targets) {
        const sent = await channel.send(target, "cap", { ...PART, file });
        assertStrictEquals(sent.ok, true, JSON.stringify(sent));
      }
      assertStrictEquals(calls.length, 3);
      const sent = calls.map((c) => decodeURIComponent(JSON.stringify(c.body)));
      assert(sent.every((body) => body.includes(LINK)), "each sent the link");
    },
  );
  assertStrictEquals(gets, 0, "bytes read from MEDIA that no platform here sends");
  // A file no longer stored is still named as gone, not sent as a dead link.
  await store.delete(PNG.id);
  await withFetch(() => Response.json({ messages: [{ id: "wamid.2" }] }), async (calls) => {
    await channel.send(targets[0], "", { ...PART, file });
    assertStrictEquals(
      calls[0].body.text.body,
      "📎 chart.png (image/png, 4 B) — it is no longer stored",
    );
  });
  assertStrictEquals(gets, 0);
});

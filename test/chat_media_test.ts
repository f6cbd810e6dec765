// Slack, Discord and WhatsApp media end to end: files fetched inside the turn through each platform's fake file API with the auth it requires, stored in R2 (MEDIA), the model sent the exact image bytes, a document's text or a voice note's transcript; never silence; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { settled } from "./_support/clients.ts";
import {
  slackBotToken as SLACK_TOKEN,
  slackDriver as slack,
  slackFile,
  slackFileShare,
} from "./_support/drivers/slack.ts";
import {
  discordAttachment,
  discordAttachmentCommand,
  discordDriver as discord,
} from "./_support/drivers/discord.ts";
import {
  whatsappAccessToken as WA_TOKEN,
  whatsappDriver as whatsapp,
  whatsappMediaMessage,
} from "./_support/drivers/whatsapp.ts";
import type { Driver } from "./_support/drivers/mod.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { expectOk } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";
import { startFakeTranscriber } from "../lib/testing/fake_transcriber.ts";

/** The transcription endpoint voice notes go to. */
const transcriber = await startFakeTranscriber();
// MEDIA bound, a small cap so that an oversize file is cheap.
const baton = sharedBaton({
  media: true,
  vars: {
    ...slack.vars(),
    ...discord.vars(),
    ...whatsapp.vars(),
    MEDIA_MAX_BYTES: "4000",
    TRANSCRIBE_BASE_URL: transcriber.url,
    TRANSCRIBE_MODEL: "whisper-test",
  },
});

const _bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
/** A 1×1 PNG. */
const PNG = _bytes(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
);
/** A 1×1 GIF. */
const GIF = _bytes("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==");
/** An OGG page header: a voice note as WhatsApp records one. */
const OGG = Uint8Array.from([..."OggS"].map((c) => c.charCodeAt(0)).concat([0, 2, 0, 0, 0, 0]));
/** A text document. */
const NOTES = new TextEncoder().encode("Meeting notes: the launch code is 4711.\n");

const dataUrl = (type: string, bytes: Uint8Array) => `data:${type};base64,${encodeBase64(bytes)}`;

let _ids = 0;
const nextId = () => String(++_ids).padStart(6, "0");

/** POSTs `payload` as `driver`'s platform does, signed; asserts the acknowledgement. */
async function post<C>(worker: TestWorker, driver: Driver<C>, payload: unknown): Promise<void> {
  const body = JSON.stringify(payload);
  const headers = await driver.sign(body, driver.credentials);
  const res = await worker.fetch(driver.path, { method: "POST", headers, body });
  const ack = driver.ack;
  await expectOk(res, typeof ack === "object" && "json" in ack ? ack.json : undefined);
}

/** The replies `driver`'s platform was sent, in order. */
function replies<C>(driver: Driver<C>, platform: FakePlatform): string[] {
  return platform.calls.flatMap((c) => {
    const sent = driver.sent(c);
    return sent ? [sent.text] : [];
  });
}

/** Resolves once `driver`'s platform was sent `n` replies (10 s at most). */
async function waitForReplies<C>(driver: Driver<C>, platform: FakePlatform, n: number) {
  const deadline = Date.now() + 10_000;
  while (replies(driver, platform).length < n) {
    if (Date.now() > deadline) {
      throw new Error(`${driver.name}: ${replies(driver, platform).length} of ${n} replies`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The image URLs the model was sent in `request`, in order. */
function imageUrls(request: FakeModelRequest): string[] {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      // deno-lint-ignore no-explicit-any
      ? m.content.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url)
      : []
  );
}

/** The text of the last user message the model was sent. */
function lastUserText(request: FakeModelRequest): string {
  // deno-lint-ignore no-explicit-any
  const users = request.body.messages.filter((m: any) => m.role === "user");
  const content = users.at(-1)?.content;
  // deno-lint-ignore no-explicit-any
  return typeof content === "string" ? content : content.map((p: any) => p.text ?? "").join("");
}

// ── Slack ───────────────────────────────────────────────────────────────────────────────────────

const slackTs = () => `1700000100.${nextId()}`;

baton.test(
  "POST /webhooks/slack: a photo shared without text is a turn; the model is sent its exact bytes, fetched from url_private with the bot token",
  async (worker, fake, platform) => {
    const chat = slack.newChat();
    const url = platform.serveFile("/files-pri/T0TEST-F01/download/dot.png", {
      bytes: PNG,
      bearer: SLACK_TOKEN,
    });
    fake.script(() => ({ kind: "text", text: "a single pixel" }));
    const file = slackFile("F01", {
      url,
      name: "dot.png",
      mimetype: "image/png",
      size: PNG.length,
    });
    await post(worker, slack, slackFileShare({ chat, text: "", id: slackTs() }, [file]));
    await waitForReplies(slack, platform, 1);
    assertEquals(replies(slack, platform), ["a single pixel"]);
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/png", PNG)]);
    const download = platform.fileCalls.find((c) => c.path.startsWith("/files-pri/"));
    assertStrictEquals(download?.headers.get("authorization"), `Bearer ${SLACK_TOKEN}`);
  },
);

baton.test(
  "POST /webhooks/slack: a shared text file reaches the model as its text, with the message's words",
  async (worker, fake, platform) => {
    const chat = slack.newChat();
    const url = platform.serveFile("/files-pri/T0TEST-F02/download/notes.txt", {
      bytes: NOTES,
      bearer: SLACK_TOKEN,
    });
    const file = slackFile("F02", {
      url,
      name: "notes.txt",
      mimetype: "text/plain",
      size: NOTES.length,
    });
    await post(
      worker,
      slack,
      slackFileShare({ chat, text: "what is the code?", id: slackTs() }, [file]),
    );
    await waitForReplies(slack, platform, 1);
    await settled(worker, slack.session(chat));
    assertStrictEquals(fake.requests.length, 1);
    const sent = JSON.stringify(fake.requests[0].body.messages);
    assert(sent.includes("4711") && sent.includes("what is the code?"), sent);
  },
);

baton.test(
  "POST /webhooks/slack: a file whose download answers 500 gets one short reply, and the next message is answered",
  async (worker, fake, platform) => {
    const chat = slack.newChat();
    const url = platform.serveFile("/files-pri/T0TEST-F03/download/dot.png", {
      bytes: PNG,
      bearer: SLACK_TOKEN,
      status: 500,
    });
    const file = slackFile("F03", {
      url,
      name: "dot.png",
      mimetype: "image/png",
      size: PNG.length,
    });
    await post(worker, slack, slackFileShare({ chat, text: "", id: slackTs() }, [file]));
    await waitForReplies(slack, platform, 1);
    await settled(worker, slack.session(chat));
    const [notice] = replies(slack, platform);
    assert(/couldn't read the photo/i.test(notice) && /500/.test(notice), notice);
    assert(!notice.includes(SLACK_TOKEN), "no token in the notice");
    assertStrictEquals(fake.requests.length, 0, "no model call");
    await post(worker, slack, slack.shape({ chat, text: "hello again", id: slackTs() }));
    await waitForReplies(slack, platform, 2);
    assertEquals(replies(slack, platform), [notice, "hello again"]);
  },
);

// ── Discord ─────────────────────────────────────────────────────────────────────────────────────

const discordId = () => `12100000000${nextId()}`;

baton.test(
  "POST /webhooks/discord: a slash command with only an image attachment is a turn; the model is sent the CDN file's exact bytes",
  async (worker, fake, platform) => {
    const chat = discord.newChat();
    const url = platform.serveFile("/ephemeral-attachments/1/2/dot.gif", { bytes: GIF });
    fake.script(() => ({ kind: "text", text: "a gif pixel" }));
    const attachment = discordAttachment("1700000000000000001", {
      url,
      filename: "dot.gif",
      content_type: "image/gif",
      size: GIF.length,
    });
    await post(
      worker,
      discord,
      discordAttachmentCommand({ chat, text: "", id: discordId() }, [attachment]),
    );
    await waitForReplies(discord, platform, 1);
    assertEquals(replies(discord, platform), ["a gif pixel"]);
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/gif", GIF)]);
  },
);

baton.test(
  "POST /webhooks/discord: an attached text file reaches the model as its text, with the prompt",
  async (worker, fake, platform) => {
    const chat = discord.newChat();
    const url = platform.serveFile("/ephemeral-attachments/1/3/notes.txt", { bytes: NOTES });
    const attachment = discordAttachment("1700000000000000002", {
      url,
      filename: "notes.txt",
      content_type: "text/plain; charset=utf-8",
      size: NOTES.length,
    });
    await post(
      worker,
      discord,
      discordAttachmentCommand({ chat, text: "what is the code?", id: discordId() }, [attachment]),
    );
    await waitForReplies(discord, platform, 1);
    await settled(worker, discord.session(chat));
    assertStrictEquals(fake.requests.length, 1);
    const sent = JSON.stringify(fake.requests[0].body.messages);
    assert(sent.includes("4711") && sent.includes("what is the code?"), sent);
  },
);

baton.test(
  "POST /webhooks/discord: an attachment whose download answers 500 gets one short reply, and the next command is answered",
  async (worker, fake, platform) => {
    const chat = discord.newChat();
    const url = platform.serveFile("/ephemeral-attachments/1/4/dot.png", {
      bytes: PNG,
      status: 500,
    });
    const attachment = discordAttachment("1700000000000000003", {
      url,
      filename: "dot.png",
      content_type: "image/png",
      size: PNG.length,
    });
    await post(
      worker,
      discord,
      discordAttachmentCommand({ chat, text: "", id: discordId() }, [attachment]),
    );
    await waitForReplies(discord, platform, 1);
    await settled(worker, discord.session(chat));
    const [notice] = replies(discord, platform);
    assert(/couldn't read the photo/i.test(notice) && /500/.test(notice), notice);
    assertStrictEquals(fake.requests.length, 0, "no model call");
    await post(worker, discord, discord.shape({ chat, text: "hello again", id: discordId() }));
    await waitForReplies(discord, platform, 2);
    assertEquals(replies(discord, platform), [notice, "hello again"]);
  },
);

// ── WhatsApp ────────────────────────────────────────────────────────────────────────────────────

const wamid = () => `wamid.MEDIA${nextId()}`;

baton.test(
  "POST /webhooks/whatsapp: an image without a caption is a turn; the model is sent its exact bytes, looked up and downloaded with the access token",
  async (worker, fake, platform) => {
    const chat = whatsapp.newChat();
    platform.serveWhatsappMedia(WA_TOKEN, "9100000000000001", { bytes: PNG, type: "image/png" });
    fake.script(() => ({ kind: "text", text: "a single pixel" }));
    await post(
      worker,
      whatsapp,
      whatsappMediaMessage({ chat, text: "", id: wamid() }, "image", {
        id: "9100000000000001",
        mime_type: "image/png",
      }),
    );
    await waitForReplies(whatsapp, platform, 1);
    assertEquals(replies(whatsapp, platform), ["a single pixel"]);
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/png", PNG)]);
    assertEquals(platform.fileCalls.map((c) => [c.path, c.headers.get("authorization")]), [
      ["/9100000000000001", `Bearer ${WA_TOKEN}`],
      ["/whatsapp-media/9100000000000001", `Bearer ${WA_TOKEN}`],
    ]);
  },
);

baton.test(
  "POST /webhooks/whatsapp: a voice note is transcribed (its exact bytes) and the model answers the transcript",
  async (worker, fake, platform) => {
    transcriber.reset();
    const chat = whatsapp.newChat();
    platform.serveWhatsappMedia(WA_TOKEN, "9100000000000002", {
      bytes: OGG,
      type: "audio/ogg; codecs=opus",
    });
    await post(
      worker,
      whatsapp,
      whatsappMediaMessage({ chat, text: "", id: wamid() }, "audio", {
        id: "9100000000000002",
        mime_type: "audio/ogg; codecs=opus",
        voice: true,
      }),
    );
    await waitForReplies(whatsapp, platform, 1);
    await settled(worker, whatsapp.session(chat));
    assertStrictEquals(transcriber.requests.length, 1);
    assertEquals(transcriber.requests[0].bytes, OGG);
    assertStrictEquals(fake.requests.length, 1);
    assert(/hello from the voice note/.test(lastUserText(fake.requests[0])));
  },
);

baton.test(
  "POST /webhooks/whatsapp: a medium whose download answers 500 gets one short reply, and the next message is answered",
  async (worker, fake, platform) => {
    const chat = whatsapp.newChat();
    platform.serveWhatsappMedia(WA_TOKEN, "9100000000000003", {
      bytes: PNG,
      type: "image/png",
      status: 500,
    });
    await post(
      worker,
      whatsapp,
      whatsappMediaMessage({ chat, text: "", id: wamid() }, "image", {
        id: "9100000000000003",
        mime_type: "image/png",
      }),
    );
    await waitForReplies(whatsapp, platform, 1);
    await settled(worker, whatsapp.session(chat));
    const [notice] = replies(whatsapp, platform);
    assert(/couldn't read the photo/i.test(notice) && /500/.test(notice), notice);
    assert(!notice.includes(WA_TOKEN), "no token in the notice");
    assertStrictEquals(fake.requests.length, 0, "no model call");
    await post(worker, whatsapp, whatsapp.shape({ chat, text: "hello again", id: wamid() }));
    await waitForReplies(whatsapp, platform, 2);
    assertEquals(replies(whatsapp, platform), [notice, "hello again"]);
  },
);

baton.test("the fake transcription endpoint closes", async () => {
  await transcriber.close();
});

baton.done();

// Files out on Slack, Discord, WhatsApp, LINE and Twilio end to end: a tool's image sent as each platform's own media (Slack's external upload, a Discord attachment, WhatsApp/LINE/Twilio media by the signed /media link) through the outbox, then the text reply; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { settled, until } from "./_support/clients.ts";
import { deliver, type Driver } from "./_support/drivers/mod.ts";
import { discordDriver } from "./_support/drivers/discord.ts";
import { lineDriver } from "./_support/drivers/line.ts";
import { slackDriver } from "./_support/drivers/slack.ts";
import { twilioDriver } from "./_support/drivers/twilio.ts";
import { whatsappDriver } from "./_support/drivers/whatsapp.ts";
import type { FakePlatform, PlatformCall, UploadedFile } from "./_support/fake_platform.ts";
import { CHART_PNG_BASE64 } from "./_support/files_fixtures.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakeModel, FakeModelRequest } from "../lib/testing/fake_model.ts";

// Twilio signs over PUBLIC_URL: its driver's is the deployment's, and the signed links' base.
const TWILIO_VARS = twilioDriver.vars();
const PUBLIC_URL = TWILIO_VARS.PUBLIC_URL;
const baton = sharedBaton({
  entry: "test/_support/files_worker.ts",
  media: true,
  vars: {
    ...slackDriver.vars(),
    ...discordDriver.vars(),
    ...whatsappDriver.vars(),
    ...lineDriver.vars(),
    ...TWILIO_VARS,
    MEDIA_URL_SECRET: "media-link-secret-for-platform-tests",
  },
});

const PNG = Uint8Array.from(atob(CHART_PNG_BASE64), (c) => c.charCodeAt(0));
const REPLY = "Here is your chart.";

/** The model calls draw_chart once, then answers REPLY. */
function drawsChart(fake: FakeModel): void {
  fake.script((req: FakeModelRequest) =>
    // deno-lint-ignore no-explicit-any
    req.body.messages.some((m: any) => m.role === "tool")
      ? { kind: "text", text: REPLY }
      : { kind: "tool_call", name: "draw_chart", args: {} }
  );
}

/** Sends "draw me a chart" to `chat` on `driver`'s platform; asserts it is acknowledged. */
async function ask(worker: TestWorker, driver: Driver, chat: string): Promise<void> {
  const delivery = await driver.message({ chat, text: "draw me a chart" });
  const res = await deliver((p, init) => worker.fetch(p, init), driver, delivery);
  assertStrictEquals(res.status, 200, await res.text());
}

/** The text replies `driver` sent to `chat`. */
function texts(platform: FakePlatform, driver: Driver, chat: string): string[] {
  return platform.calls.flatMap((c) => {
    const sent = driver.sent(c);
    return sent?.chat === chat && typeof sent.text === "string" ? [sent.text] : [];
  });
}

/** Asserts `link` is a signed /media link under PUBLIC_URL that serves the chart's exact bytes. */
async function servesChart(worker: TestWorker, link: unknown): Promise<void> {
  assert(typeof link === "string", `no link: ${link}`);
  const url = new URL(link);
  assertStrictEquals(url.origin, new URL(PUBLIC_URL).origin);
  assert(url.pathname.startsWith("/media/") && url.searchParams.has("sig"), link);
  const res = await worker.fetch(url.pathname + url.search);
  assertStrictEquals(res.status, 200);
  assertEquals(new Uint8Array(await res.arrayBuffer()), PNG);
}

/** Runs the chart turn on `driver`'s platform: its file calls (by `isFile`), then the text. */
async function chartTurn(
  worker: TestWorker,
  fake: FakeModel,
  platform: FakePlatform,
  driver: Driver,
  isFile: (call: PlatformCall, chat: string) => boolean,
): Promise<{ files: PlatformCall[]; text: PlatformCall }> {
  const chat = driver.newChat();
  drawsChart(fake);
  await ask(worker, driver, chat);
  await until(
    () => texts(platform, driver, chat).includes(REPLY),
    `${driver.name}: the text reply`,
  );
  await settled(worker, driver.session(chat));
  const files = platform.calls.filter((c) => isFile(c, chat));
  const text = platform.calls.find((c) =>
    driver.sent(c)?.text === REPLY && driver.sent(c)?.chat === chat
  )!;
  assert(files.length > 0, `${driver.name}: no file sent`);
  assert(files.every((f) => f.order < text.order), `${driver.name}: the text came before the file`);
  return { files, text };
}

baton.test(
  "Slack: draw_chart's image is uploaded (getUploadURLExternal, the bytes, completeUploadExternal into the DM) before the text reply",
  async (worker, fake, platform) => {
    const slack = /^\/(api\/files\.|slack-upload\/)/;
    const { files } = await chartTurn(
      worker,
      fake,
      platform,
      slackDriver,
      (c) => slack.test(c.path),
    );
    assertEquals(files.map((c) => c.path.replace(/F[0-9]+UP$/, "F")), [
      "/api/files.getUploadURLExternal",
      "/slack-upload/F",
      "/api/files.completeUploadExternal",
    ]);
    assertStrictEquals(files[0].body.filename, "chart.png");
    assertEquals((files[1].body as UploadedFile).bytes, PNG);
    assertStrictEquals(
      files[1].headers.get("authorization"),
      null,
      "the token went to the upload URL",
    );
    const chat = files[2].body.channel_id;
    assert(chat.startsWith("D"), chat);
    assertEquals(JSON.parse(files[2].body.files)[0].title, "chart.png");
  },
);

baton.test(
  "Discord: draw_chart's image is the deferred reply's attachment (files[0] + payload_json on @original), the text a follow-up",
  async (worker, fake, platform) => {
    const { files, text } = await chartTurn(
      worker,
      fake,
      platform,
      discordDriver,
      (c) => typeof c.body?.payload_json === "string",
    );
    assertStrictEquals(files.length, 1);
    assertStrictEquals(files[0].method, "PATCH");
    assert(files[0].path.endsWith("/messages/@original"), files[0].path);
    const upload = files[0].body["files[0]"] as UploadedFile;
    assertEquals(upload.bytes, PNG);
    assertStrictEquals(upload.filename, "chart.png");
    assertEquals(JSON.parse(files[0].body.payload_json).attachments, [{
      id: 0,
      filename: "chart.png",
    }]);
    assertStrictEquals(text.method, "POST");
  },
);

baton.test(
  "WhatsApp: draw_chart's image is an image message whose link is the signed /media URL, then the text reply",
  async (worker, fake, platform) => {
    const { files } = await chartTurn(
      worker,
      fake,
      platform,
      whatsappDriver,
      (c, chat) => c.body?.type === "image" && c.body?.to === chat,
    );
    assertStrictEquals(files.length, 1);
    assertStrictEquals(files[0].body.messaging_product, "whatsapp");
    await servesChart(worker, files[0].body.image.link);
  },
);

baton.test(
  "LINE: draw_chart's image is an image message (originalContentUrl and previewImageUrl the signed /media URL), then the text reply",
  async (worker, fake, platform) => {
    const { files } = await chartTurn(
      worker,
      fake,
      platform,
      lineDriver,
      (c, chat) => c.body?.to === chat && c.body?.messages?.[0]?.type === "image",
    );
    assertStrictEquals(files.length, 1);
    const [image] = files[0].body.messages;
    assertStrictEquals(image.previewImageUrl, image.originalContentUrl);
    await servesChart(worker, image.originalContentUrl);
    assert(files[0].headers.get("x-line-retry-key"), "the push carries its retry key");
  },
);

baton.test(
  "Twilio: draw_chart's image is an MMS whose MediaUrl is the signed /media URL, then the text reply",
  async (worker, fake, platform) => {
    const { files } = await chartTurn(
      worker,
      fake,
      platform,
      twilioDriver,
      (c, chat) => c.body?.To === chat && typeof c.body?.MediaUrl === "string",
    );
    assertStrictEquals(files.length, 1);
    await servesChart(worker, files[0].body.MediaUrl);
  },
);

baton.done();

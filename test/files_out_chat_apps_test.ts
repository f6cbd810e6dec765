// Files out on Teams and Google Chat end to end: a tool's image sent as each platform's own media by the signed /media link (a Bot Framework inline image attachment, a Chat card's image widget) through the outbox, then the text reply; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { settled, until } from "./_support/clients.ts";
import { deliver, type Driver } from "./_support/drivers/mod.ts";
import { googleChatDriver } from "./_support/drivers/google_chat.ts";
import { teamsDriver } from "./_support/drivers/teams.ts";
import type { FakePlatform, PlatformCall } from "./_support/fake_platform.ts";
import { CHART_PNG_BASE64 } from "./_support/files_fixtures.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakeModel, FakeModelRequest } from "../lib/testing/fake_model.ts";

const PUBLIC_URL = "https://baton-chat-apps.example.com";
const baton = sharedBaton({
  entry: "test/_support/files_worker.ts",
  media: true,
  vars: {
    ...teamsDriver.vars(),
    ...googleChatDriver.vars(),
    PUBLIC_URL,
    MEDIA_URL_SECRET: "media-link-secret-for-chat-app-tests",
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

/** Asserts `link` is a signed /media link under PUBLIC_URL that serves the chart's exact bytes. */
async function servesChart(worker: TestWorker, link: unknown): Promise<void> {
  assert(typeof link === "string", `no link: ${link}`);
  const url = new URL(link);
  assertStrictEquals(url.origin, PUBLIC_URL);
  assert(url.pathname.startsWith("/media/") && url.searchParams.has("sig"), link);
  const res = await worker.fetch(url.pathname + url.search);
  assertStrictEquals(res.status, 200);
  assertEquals(new Uint8Array(await res.arrayBuffer()), PNG);
}

/**
 * Runs the chart turn in a new chat on `driver`'s platform: asks, waits for the text reply and the
 * settled session; returns the calls `isFile` picks (asserted before the text) and the text's.
 */
async function chartTurn(
  worker: TestWorker,
  fake: FakeModel,
  platform: FakePlatform,
  driver: Driver,
  isFile: (call: PlatformCall, chat: string) => boolean,
): Promise<{ files: PlatformCall[]; text: PlatformCall }> {
  driver.vars(platform); // Teams names the fake as serviceUrl; both publish their keys on it
  const chat = driver.newChat();
  drawsChart(fake);
  const delivery = await driver.message({ chat, text: "draw me a chart" });
  const res = await deliver((p, init) => worker.fetch(p, init), driver, delivery);
  assertStrictEquals(res.status, 200, await res.text());
  const isText = (c: PlatformCall) =>
    driver.sent(c)?.chat === chat && driver.sent(c)?.text === REPLY;
  await until(() => platform.calls.some(isText), `${driver.name}: the text reply`);
  await settled(worker, driver.session(chat));
  const files = platform.calls.filter((c) => isFile(c, chat));
  const text = platform.calls.find(isText)!;
  assert(files.length > 0, `${driver.name}: no file sent`);
  assert(files.every((f) => f.order < text.order), `${driver.name}: the text came before the file`);
  return { files, text };
}

baton.test(
  "Teams: draw_chart's image is an inline attachment (contentType image/png, contentUrl the signed /media URL) posted once, then the text reply",
  async (worker, fake, platform) => {
    const { files } = await chartTurn(
      worker,
      fake,
      platform,
      teamsDriver,
      (c, chat) =>
        c.path.includes(`/conversations/${encodeURIComponent(chat)}/activities`) &&
        Array.isArray(c.body?.attachments),
    );
    assertStrictEquals(files.length, 1, "the image was posted more than once");
    const [image] = files[0].body.attachments;
    assertStrictEquals(image.contentType, "image/png");
    assertStrictEquals(image.name, "chart.png");
    await servesChart(worker, image.contentUrl);
  },
);

baton.test(
  "Google Chat: draw_chart's image is a card's image widget (imageUrl the signed /media URL) created once, then the text reply",
  async (worker, fake, platform) => {
    const { files, text } = await chartTurn(
      worker,
      fake,
      platform,
      googleChatDriver,
      (c, chat) => c.path.startsWith(`/chat/v1/${chat}/messages`) && Array.isArray(c.body?.cardsV2),
    );
    assertStrictEquals(files.length, 1, "the image was created more than once");
    const { image } = files[0].body.cardsV2[0].card.sections[0].widgets[0];
    assertStrictEquals(image.altText, "chart.png");
    await servesChart(worker, image.imageUrl);
    // Each part has its own client message id: the file's is not the text's.
    const id = (c: PlatformCall) => new URL(c.path, "http://x").searchParams.get("messageId");
    assert(id(files[0]) && id(files[0]) !== id(text), "the file and the text share a message id");
  },
);

baton.done();

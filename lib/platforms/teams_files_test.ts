// Unit tests of files out on Teams: an image as an inline attachment by its signed /media link, another file as an Adaptive Card with a link button, no link as the file's note; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import * as AdaptiveCards from "adaptivecards";
import type { Attachment } from "botframework-schema";
import type { OutgoingFile } from "../chat/mod.ts";
import { withFetch } from "./_fetch_stub.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";
import { teamsAdapter, type TeamsTarget } from "./teams.ts";

const ENV = {
  TEAMS_APP_ID: "app-1",
  TEAMS_APP_PASSWORD: "teams-password-0123456789",
  TEAMS_TOKEN_URL: "https://login.teams.test/token",
};
const TARGET: TeamsTarget = {
  platform: "teams",
  serviceUrl: "https://smba.teams.test/amer/",
  conversation: "a:1personal",
  replyTo: "1700000000001",
};
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
/** botframework-schema's `Attachment`, every key. */
const ATTACHMENT_KEYS: KeyTable<Attachment> = {
  contentType: true,
  contentUrl: true,
  content: true,
  name: true,
  thumbnailUrl: true,
};

/** Answers the token request and records every Bot Connector post's body. */
async function sends(fn: () => Promise<void>): Promise<Record<string, unknown>[]> {
  resetJwtCaches();
  let bodies: Record<string, unknown>[] = [];
  await withFetch(
    (call) =>
      call.url === ENV.TEAMS_TOKEN_URL
        ? Response.json({ token_type: "Bearer", expires_in: 3599, access_token: "bf-token" })
        : Response.json({ id: "1:sent" }, { status: 201 }),
    async (calls) => {
      await fn();
      bodies = calls.filter((c) => c.url !== ENV.TEAMS_TOKEN_URL).map((c) => c.body);
    },
  );
  return bodies;
}

Deno.test("teamsAdapter.sendFile() posts an image as an inline attachment (contentType the image's, contentUrl the signed link), the caption as the text", async () => {
  let left = 0;
  const [withCaption, bare] = await sends(async () => {
    const part = { ...PART, leaving: () => void left++ };
    assertEquals(await teamsAdapter.sendFile!(TARGET, PNG, "here", part, ENV), { ok: true });
    assertEquals(await teamsAdapter.sendFile!(TARGET, PNG, "", PART, ENV), { ok: true });
  });
  assertEquals(withCaption, {
    type: "message",
    text: "here",
    textFormat: "markdown",
    attachments: [{ contentType: "image/png", contentUrl: LINK, name: "chart.png" }],
    replyToId: "1700000000001",
  });
  assertDeclaredKeys<Attachment>(
    "attachment",
    (withCaption.attachments as unknown[])[0],
    ATTACHMENT_KEYS,
    ["contentType", "contentUrl"],
  );
  // No caption: the image alone, no empty text.
  assertStrictEquals(bare.text, undefined);
  assertStrictEquals(left, 1, "leaving() is called once, as the post leaves");
});

Deno.test("teamsAdapter.sendFile() posts another file as an Adaptive Card naming it, with an Action.OpenUrl to its signed link", async () => {
  const [body] = await sends(async () => {
    assertEquals(await teamsAdapter.sendFile!(TARGET, PDF, "the report", PART, ENV), { ok: true });
  });
  assertStrictEquals(body.text, "the report");
  const [attachment] = body.attachments as Attachment[];
  assertDeclaredKeys<Attachment>("attachment", attachment, ATTACHMENT_KEYS, ["contentType"]);
  assertStrictEquals(attachment.contentType, "application/vnd.microsoft.card.adaptive");
  // The Adaptive Cards library's own parser reads it without an error.
  const card = new AdaptiveCards.AdaptiveCard();
  const errors: unknown[] = [];
  card.parse(attachment.content, errors as never);
  assertEquals(errors, []);
  assertEquals(card.validateProperties().failures, []);
  const text = card.getItemAt(0);
  assert(text instanceof AdaptiveCards.TextBlock);
  assertStrictEquals(text.text, "📎 report.pdf (application/pdf, 4 B)");
  const open = card.getActionAt(0);
  assert(open instanceof AdaptiveCards.OpenUrlAction);
  assertStrictEquals(open.url, LINK);
  assertStrictEquals(open.title, "Open report.pdf");
});

Deno.test("teamsAdapter.sendFile() without a signed link (no PUBLIC_URL or MEDIA_URL_SECRET) sends the file's note as text, the caption under it", async () => {
  const [body] = await sends(async () => {
    await teamsAdapter.sendFile!(TARGET, { ...PNG, url: null }, "cap", PART, ENV);
  });
  assertEquals(body, {
    type: "message",
    text: "📎 chart.png (image/png, 4 B) — files cannot be shown here\n\ncap",
    textFormat: "markdown",
    replyToId: "1700000000001",
  });
});

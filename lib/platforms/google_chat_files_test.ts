// Unit tests of files out on Google Chat: an image as a card's image widget by its signed /media link, another file as a card with an open-link button, no link as the file's note, each created once by its client message id; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { chat_v1 } from "@googleapis/chat";
import type { OutgoingFile } from "../chat/mod.ts";
import { withFetch } from "./_fetch_stub.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";
import { testServiceAccount } from "./_jwt_fixtures.ts";
import { googleChatAdapter, googleChatMessageId, type GoogleChatTarget } from "./google_chat.ts";

const SERVICE_ACCOUNT = await testServiceAccount();
const TOKEN_URL = "https://oauth2.googleapis.com/token";
const ENV = {
  GOOGLE_CHAT_AUDIENCE: "123456789012",
  GOOGLE_CHAT_SERVICE_ACCOUNT: SERVICE_ACCOUNT.json,
  GOOGLE_CHAT_API_ROOT: "https://chat.test/v1",
};
const TARGET: GoogleChatTarget = {
  platform: "google-chat",
  space: "spaces/AAAAroom01",
  thread: "spaces/AAAAroom01/threads/thr2",
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

const CARD_WITH_ID_KEYS: KeyTable<chat_v1.Schema$CardWithId> = { card: true, cardId: true };
const IMAGE_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1Image> = {
  altText: true,
  imageUrl: true,
  onClick: true,
};
const TEXT_PARAGRAPH_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1TextParagraph> = {
  maxLines: true,
  text: true,
  textSyntax: true,
};
const OPEN_LINK_KEYS: KeyTable<chat_v1.Schema$GoogleAppsCardV1OpenLink> = {
  onClose: true,
  openAs: true,
  url: true,
};

/** Answers the token endpoint and the Chat API; returns the Chat API calls (URL and body). */
async function creates(fn: () => Promise<void>) {
  resetJwtCaches();
  let sent: { url: URL; body: chat_v1.Schema$Message }[] = [];
  await withFetch(
    (call) =>
      call.url === TOKEN_URL
        ? Response.json({ access_token: "ya29.token", expires_in: 3599, token_type: "Bearer" })
        : Response.json({ name: "spaces/AAAAroom01/messages/sent1" }),
    async (calls) => {
      await fn();
      sent = calls.filter((c) => c.url !== TOKEN_URL).map((c) => ({
        url: new URL(c.url),
        body: c.body,
      }));
    },
  );
  return sent;
}

/** The one widget of a file card, its `cardsV2` checked against @googleapis/chat's schema. */
function fileWidgets(message: chat_v1.Schema$Message): chat_v1.Schema$GoogleAppsCardV1Widget[] {
  assertStrictEquals(message.cardsV2?.length, 1);
  const [entry] = message.cardsV2!;
  assertDeclaredKeys<chat_v1.Schema$CardWithId>("cardsV2[]", entry, CARD_WITH_ID_KEYS, [
    "cardId",
    "card",
  ]);
  return entry.card?.sections?.[0]?.widgets ?? [];
}

Deno.test("googleChatAdapter.sendFile() creates a message whose card shows the image from its signed link, the caption as its text, under the part's client message id", async () => {
  let left = 0;
  const [call] = await creates(async () => {
    const part = { ...PART, leaving: () => void left++ };
    assertEquals(await googleChatAdapter.sendFile!(TARGET, PNG, "here", part, ENV), { ok: true });
  });
  assertStrictEquals(call.url.pathname, "/v1/spaces/AAAAroom01/messages");
  // The same client message id as a text part with this marker: a resend is created once.
  const id = await googleChatMessageId(TARGET.space, PART.marker);
  assertStrictEquals(call.url.searchParams.get("messageId"), id);
  assertStrictEquals(call.url.searchParams.get("requestId"), id);
  assertStrictEquals(call.body.text, "here");
  assertEquals(call.body.thread, { name: TARGET.thread });
  assertStrictEquals(call.body.fallbackText, `📎 chart.png (image/png, 4 B): ${LINK}`);
  const [widget] = fileWidgets(call.body);
  assertDeclaredKeys<chat_v1.Schema$GoogleAppsCardV1Image>("image", widget.image, IMAGE_KEYS, [
    "imageUrl",
    "altText",
  ]);
  assertEquals(widget.image, { imageUrl: LINK, altText: "chart.png" });
  assertStrictEquals(left, 1);
});

Deno.test("googleChatAdapter.sendFile() creates another file as a card naming it with a button that opens its signed link", async () => {
  const [call] = await creates(async () => {
    assertEquals(await googleChatAdapter.sendFile!(TARGET, PDF, "", PART, ENV), { ok: true });
  });
  assertStrictEquals(call.body.text, "");
  const [name, buttons] = fileWidgets(call.body);
  assertDeclaredKeys("textParagraph", name.textParagraph, TEXT_PARAGRAPH_KEYS, ["text"]);
  assertStrictEquals(name.textParagraph?.text, "📎 report.pdf (application/pdf, 4 B)");
  const [button] = buttons.buttonList?.buttons ?? [];
  assert(button, "no button");
  assertStrictEquals(button.text, "Open report.pdf");
  assertDeclaredKeys("openLink", button.onClick?.openLink, OPEN_LINK_KEYS, ["url"]);
  assertStrictEquals(button.onClick?.openLink?.url, LINK);
});

Deno.test("googleChatAdapter.sendFile() sends an image over 2 MB, or behind a plain-http link, as the button card: the image widget shows neither", async () => {
  const big = { ...PNG, size: 2 * 1024 * 1024 + 1 };
  const http = { ...PNG, url: "http://localhost:8787/media/s/abc?exp=1&sig=00" };
  const calls = await creates(async () => {
    await googleChatAdapter.sendFile!(TARGET, big, "", PART, ENV);
    await googleChatAdapter.sendFile!(TARGET, http, "", PART, ENV);
  });
  for (const [i, call] of calls.entries()) {
    const widgets = fileWidgets(call.body);
    assertStrictEquals(widgets[0].image, undefined, `call ${i}`);
    assertStrictEquals(
      widgets[1].buttonList?.buttons?.[0].onClick?.openLink?.url,
      [big, http][i].url,
    );
  }
});

Deno.test("googleChatAdapter.sendFile() without a signed link sends the file's note as text, no card", async () => {
  const [call] = await creates(async () => {
    await googleChatAdapter.sendFile!(TARGET, { ...PNG, url: null }, "cap", PART, ENV);
  });
  assertStrictEquals(
    call.body.text,
    "📎 chart.png (image/png, 4 B) — files cannot be shown here\n\ncap",
  );
  assertStrictEquals(call.body.cardsV2, undefined);
});

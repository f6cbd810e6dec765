// Unit tests of Google Chat's media: attachments announced (uploaded by resource name, Drive files named as not read), downloaded through the media API with the app's token (google_chat_media.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import { withFetch } from "./_fetch_stub.ts";
import { fetchGoogleChatMedia, googleChatMedia } from "./google_chat_media.ts";

const options = () => ({ signal: new AbortController().signal, maxBytes: 100 });

Deno.test("googleChatMedia() announces uploaded files by resource name and Drive files by id", () => {
  assertEquals(
    googleChatMedia([
      {
        name: "spaces/A/messages/B/attachments/C",
        contentName: "dot.png",
        contentType: "image/png",
        attachmentDataRef: { resourceName: "res/1" },
        source: "UPLOADED_CONTENT",
      },
      {
        contentName: "plan.pdf",
        contentType: "application/pdf",
        driveDataRef: { driveFileId: "d1" },
        source: "DRIVE_FILE",
      },
      { contentName: "nothing" },
    ]),
    [
      { platform: "google-chat", file: "res/1", kind: "photo", name: "dot.png", type: "image/png" },
      {
        platform: "google-chat",
        file: "drive:d1",
        kind: "document",
        name: "plan.pdf",
        type: "application/pdf",
      },
    ],
  );
});

Deno.test("fetchGoogleChatMedia() answers a Drive file as not read, asking nothing", async () => {
  await withFetch(() => new Response(null), async (calls) => {
    const got = await fetchGoogleChatMedia(
      { platform: "google-chat", file: "drive:d1", kind: "document" },
      {},
      options(),
    );
    assert(!got.ok && /Drive/.test(got.why));
    assertEquals(calls.length, 0);
  });
});

Deno.test("fetchGoogleChatMedia() says a missing service account without fetching", async () => {
  await withFetch(() => new Response(null), async (calls) => {
    const got = await fetchGoogleChatMedia(
      { platform: "google-chat", file: "res/1", kind: "photo" },
      { GOOGLE_CHAT_SERVICE_ACCOUNT: "{}" },
      options(),
    );
    assert(!got.ok && /GOOGLE_CHAT_SERVICE_ACCOUNT/.test(got.why));
    assertEquals(calls.length, 0);
  });
});

// Unit tests of Teams' media: attachments announced (cards and the HTML copy skipped), the bot's token only to the Bot Connector's hosts (teams_media.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import { withFetch } from "./_fetch_stub.ts";
import { resetJwtCaches } from "./_jwt.ts";
import { fetchTeamsMedia, teamsMedia } from "./teams_media.ts";

const SERVICE = "https://smba.trafficmanager.net/amer/";
const ENV = {
  TEAMS_APP_ID: "app",
  TEAMS_APP_PASSWORD: "teams-password-value",
  TEAMS_TOKEN_URL: "https://login.test/token",
};
const options = () => ({ signal: new AbortController().signal, maxBytes: 100 });

Deno.test("teamsMedia() announces images and files, marks the Bot Connector's for the token, skips cards and HTML", () => {
  const inline = `${SERVICE}v3/attachments/a1/views/original`;
  assertEquals(
    teamsMedia([
      { contentType: "image/*", contentUrl: inline },
      { contentType: "text/html", content: "<div>hi</div>" },
      { contentType: "application/vnd.microsoft.card.adaptive", content: {} },
      {
        contentType: "application/vnd.microsoft.teams.file.download.info",
        name: "report.pdf",
        contentUrl: "https://contoso.sharepoint.com/report.pdf",
        content: { downloadUrl: "https://contoso.sharepoint.com/dl?x=1", fileType: "pdf" },
      },
      { contentType: "image/png", contentUrl: "https://elsewhere.example/p.png" },
    ], SERVICE),
    [
      { platform: "teams", file: `bot:${inline}`, kind: "photo", type: "image/*" },
      {
        platform: "teams",
        file: "https://contoso.sharepoint.com/dl?x=1",
        kind: "document",
        name: "report.pdf",
      },
      {
        platform: "teams",
        file: "https://elsewhere.example/p.png",
        kind: "photo",
        type: "image/png",
      },
    ],
  );
  assertEquals(teamsMedia(undefined, SERVICE), []);
});

Deno.test("fetchTeamsMedia() downloads a Bot Connector attachment with the bot's token, and another without it", async () => {
  resetJwtCaches();
  await withFetch(
    (call) =>
      call.url === ENV.TEAMS_TOKEN_URL
        ? Response.json({ access_token: "bot-token-1", expires_in: 3600, token_type: "Bearer" })
        : new Response(new Uint8Array([5])),
    async (calls) => {
      const url = `${SERVICE}v3/attachments/a1/views/original`;
      const got = await fetchTeamsMedia(
        { platform: "teams", file: `bot:${url}`, kind: "photo" },
        ENV,
        options(),
      );
      assert(got.ok);
      const download = calls.find((c) => c.url === url);
      assertEquals(download?.headers.get("authorization"), "Bearer bot-token-1");
      await fetchTeamsMedia(
        { platform: "teams", file: "https://elsewhere.example/p.png", kind: "photo" },
        ENV,
        options(),
      );
      assertEquals(calls.at(-1)?.headers.get("authorization"), null);
    },
  );
});

// Unit tests of Twilio's media: MediaUrl0…N announced from the form, downloaded with basic auth on the API's origin only, Twilio's redirect followed without it (twilio_media.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import { withFetch } from "./_fetch_stub.ts";
import { fetchTwilioMedia, twilioMedia } from "./twilio_media.ts";

const SID = "AC" + "1234567890abcdef".repeat(2);
const TOKEN = "twilio-auth-token-0123456789abcd";
const ENV = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN };
const BASIC = `Basic ${btoa(`${SID}:${TOKEN}`)}`;
const MEDIA = `https://api.twilio.com/2010-04-01/Accounts/${SID}/Messages/MM1/Media/ME1`;
const options = () => ({ signal: new AbortController().signal, maxBytes: 100 });

Deno.test("twilioMedia() announces NumMedia entries by content type, skipping a malformed URL", () => {
  const form = new URLSearchParams({
    NumMedia: "3",
    MediaUrl0: MEDIA,
    MediaContentType0: "image/jpeg",
    MediaUrl1: "not a url",
    MediaContentType1: "image/png",
    MediaUrl2: `${MEDIA}2`,
    MediaContentType2: "audio/amr",
  });
  assertEquals(twilioMedia(form), [
    { platform: "twilio", file: MEDIA, kind: "photo", type: "image/jpeg" },
    { platform: "twilio", file: `${MEDIA}2`, kind: "voice", type: "audio/amr" },
  ]);
  assertEquals(twilioMedia(new URLSearchParams({ NumMedia: "0" })), []);
});

Deno.test("fetchTwilioMedia() sends basic auth to the API, then follows the redirect to the CDN without it", async () => {
  await withFetch(
    (_, i) =>
      i === 0
        ? new Response(null, { status: 307, headers: { location: "https://cdn.twilio.test/x" } })
        : new Response(new Uint8Array([7, 8])),
    async (calls) => {
      const item = { platform: "twilio", file: MEDIA, kind: "photo" as const };
      assertEquals(await fetchTwilioMedia(item, ENV, options()), {
        ok: true,
        bytes: new Uint8Array([7, 8]),
      });
      assertEquals(calls.map((c) => c.url), [MEDIA, "https://cdn.twilio.test/x"]);
      assertEquals(calls[0].headers.get("authorization"), BASIC);
      assertEquals(calls[0].init.redirect, "manual");
      assertEquals(calls[1].headers.get("authorization"), null);
    },
  );
});

Deno.test("fetchTwilioMedia() hands no credentials to a URL off the API's origin, and words a 401 without them", async () => {
  await withFetch(() => new Response("no", { status: 401 }), async (calls) => {
    const elsewhere = { platform: "twilio", file: "https://evil.test/m", kind: "photo" as const };
    const got = await fetchTwilioMedia(elsewhere, ENV, options());
    assertEquals(calls[0].headers.get("authorization"), null);
    assert(!got.ok && /401/.test(got.why));
    assert(!got.ok && !got.why.includes(TOKEN) && !got.why.includes(BASIC.slice(6)));
  });
});

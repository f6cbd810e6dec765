// Media in from LINE, Twilio, Teams and Google Chat end to end: each platform's file endpoint on the fake (with the auth the real one requires), the bytes fetched inside the turn, stored in R2 (MEDIA), the model sent the exact image; a failed download is one short reply and the next message works; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { webhook } from "@line/bot-sdk";
import { settled } from "./_support/clients.ts";
import type { Driver } from "./_support/drivers/mod.ts";
import { googleChatDriver } from "./_support/drivers/google_chat.ts";
import { lineDriver } from "./_support/drivers/line.ts";
import { teamsDriver } from "./_support/drivers/teams.ts";
import { TWILIO_ACCOUNT_SID, twilioDriver } from "./_support/drivers/twilio.ts";
import { encode } from "./_support/drivers/wire.ts";
import type { FakePlatform, PlatformCall } from "./_support/fake_platform.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";

const LINE_VARS = lineDriver.vars();
const baton = sharedBaton({
  media: true,
  vars: {
    ...LINE_VARS,
    ...twilioDriver.vars(),
    ...teamsDriver.vars(),
    ...googleChatDriver.vars(),
    MEDIA_MAX_BYTES: "4000",
  },
});

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
const PNG_URL = `data:image/png;base64,${encodeBase64(PNG)}`;
/** What the fake's token endpoint sells (Teams, Google Chat): any other bearer is refused. */
const BOUGHT_TOKEN = /^Bearer fake-access-token-[0-9]+$/;

let _n = 0;
const next = () => ++_n;

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

/** The texts `driver` sent, as the fake recorded them. */
function replies(platform: FakePlatform, driver: Driver): string[] {
  return platform.calls.flatMap((c) => {
    const sent = driver.sent(c);
    return sent ? [sent.text] : [];
  });
}

/** POSTs `payload` to `driver`'s webhook, signed as the platform signs it; asserts the ack. */
async function post(worker: TestWorker, driver: Driver, payload: object): Promise<void> {
  const body = encode(driver, payload);
  const headers = await driver.sign(body, driver.credentials);
  const res = await worker.fetch(driver.path, { method: "POST", headers, body });
  // Acknowledged as each platform wants (Twilio: empty TwiML), starting the turn.
  assertStrictEquals(res.status, 200, await res.text());
}

/** One platform's way of sending a picture alone, and where it serves the picture from. */
interface Case {
  driver: Driver;
  /** Serves PNG (or a `status` failure) with the real API's auth; the message naming it. */
  picture(platform: FakePlatform, chat: string, status?: number): object;
  /** A text message, to show the session still answers. */
  text(platform: FakePlatform, chat: string, text: string): object;
  /** What else the download must have done, read from the fake's file calls. */
  downloaded?(fileCalls: PlatformCall[]): void;
}

const CASES: Case[] = [
  {
    driver: lineDriver,
    picture(platform, chat, status) {
      const id = `5${String(next()).padStart(13, "0")}`;
      platform.serveFile(`/v2/bot/message/${id}/content`, {
        bytes: PNG,
        bearer: LINE_VARS.LINE_CHANNEL_ACCESS_TOKEN,
        ...(status ? { status } : {}),
      });
      const callback = lineDriver.shape({ chat, text: "", id }) as webhook.CallbackRequest;
      const event = callback.events[0] as webhook.MessageEvent;
      const image: webhook.ImageMessageContent = {
        type: "image",
        id,
        quoteToken: `q-${id}`,
        contentProvider: { type: "line" },
      };
      return { ...callback, events: [{ ...event, message: image }] };
    },
    text: (_, chat, text) => lineDriver.shape({ chat, text, id: `6${next()}` }),
  },
  {
    driver: twilioDriver,
    picture(platform, chat, status) {
      const sid = `MM${String(next()).padStart(32, "0")}`;
      const path = `/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}/Messages/${sid}/Media/ME${
        String(_n).padStart(32, "0")
      }`;
      const url = platform.serveAuthorizedFile(path, {
        bytes: PNG,
        authorization: `Basic ${btoa(`${TWILIO_ACCOUNT_SID}:${twilioDriver.credentials.token}`)}`,
        redirect: true,
        ...(status ? { status } : {}),
      });
      return {
        ...twilioDriver.shape({ chat, text: "", id: sid }),
        NumMedia: "1",
        MediaUrl0: url,
        MediaContentType0: "image/png",
      };
    },
    downloaded(fileCalls) {
      // Twilio's redirect is followed, and its CDN is never handed the account's credentials.
      const cdn = fileCalls.filter((c) => c.path.startsWith("/cdn/"));
      assertStrictEquals(cdn.length, 1);
      assertStrictEquals(cdn[0].headers.get("authorization"), null);
    },
    text: (_, chat, text) =>
      twilioDriver.shape({ chat, text, id: `SM${String(next()).padStart(32, "0")}` }),
  },
  {
    driver: teamsDriver,
    picture(platform, chat, status) {
      teamsDriver.vars(platform);
      const url = platform.serveAuthorizedFile(
        `/teams/v3/attachments/img-${next()}/views/original`,
        {
          bytes: PNG,
          authorization: BOUGHT_TOKEN,
          ...(status ? { status } : {}),
        },
      );
      return {
        ...teamsDriver.shape({ chat, text: "", id: `1800${_n}` }),
        attachments: [
          { contentType: "image/*", contentUrl: url },
          { contentType: "text/html", content: `<div><img src="${url}"></div>` },
        ],
      };
    },
    text(platform, chat, text) {
      teamsDriver.vars(platform);
      return teamsDriver.shape({ chat, text, id: `1800${next()}` });
    },
  },
  {
    driver: googleChatDriver,
    picture(platform, chat, status) {
      googleChatDriver.vars(platform); // Chat's signing key published on the fake
      const resource = `ATT-${next()}-res`;
      platform.serveAuthorizedFile(`/chat/v1/media/${resource}`, {
        bytes: PNG,
        authorization: BOUGHT_TOKEN,
        query: { alt: "media" },
        ...(status ? { status } : {}),
      });
      // deno-lint-ignore no-explicit-any
      const event: any = googleChatDriver.shape({ chat, text: "", id: `${chat}/messages/m${_n}` });
      event.message.attachment = [{
        name: `${chat}/messages/m${_n}/attachments/a1`,
        contentName: "dot.png",
        contentType: "image/png",
        attachmentDataRef: { resourceName: resource },
        source: "UPLOADED_CONTENT",
      }];
      return event;
    },
    text(platform, chat, text) {
      googleChatDriver.vars(platform);
      return googleChatDriver.shape({ chat, text, id: `${chat}/messages/t${next()}` });
    },
  },
];

for (const { driver, picture, text, downloaded } of CASES) {
  baton.test(
    `POST ${driver.path}: a picture alone is a turn, fetched with the platform's credentials, and the model sent its exact bytes`,
    async (worker, fake, platform) => {
      const chat = driver.newChat();
      fake.script(() => ({ kind: "text", text: "a single pixel" }));
      await post(worker, driver, picture(platform, chat));
      await platform.waitForCalls(1);
      await settled(worker, driver.session(chat));
      assertEquals(replies(platform, driver), ["a single pixel"]);
      assertStrictEquals(fake.requests.length, 1);
      assertEquals(imageUrls(fake.requests[0]), [PNG_URL]);
      assert(platform.fileCalls.length >= 1, "downloaded from the file endpoint");
      downloaded?.(platform.fileCalls);
    },
  );

  baton.test(
    `POST ${driver.path}: a picture whose download answers 500 gets one short reply, no model call, and the next message is answered`,
    async (worker, fake, platform) => {
      const chat = driver.newChat();
      await post(worker, driver, picture(platform, chat, 500));
      await platform.waitForCalls(1);
      await settled(worker, driver.session(chat));
      const [notice] = replies(platform, driver);
      assert(/couldn't read the photo/i.test(notice), notice);
      for (const secret of Object.values(driver.vars(platform))) {
        assert(!notice.includes(secret), "no credential in the notice");
      }
      assertStrictEquals(fake.requests.length, 0, "no model call");
      await post(worker, driver, text(platform, chat, "hello again"));
      await platform.waitForCalls(2);
      await settled(worker, driver.session(chat));
      assertEquals(replies(platform, driver), [notice, "hello again"]);
    },
  );
}

baton.done();

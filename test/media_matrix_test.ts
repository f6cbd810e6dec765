// The media matrix of issue 29: on every chat platform and the generic webhook, a voice note, a document, an oversize file, a corrupt file and a download that never answers are each answered exactly once, and the chat's next message works; Deno + Miniflare.
import { assert, assertEquals, assertMatch } from "@std/assert";
import type { webhook } from "@line/bot-sdk";
import { settled, until } from "./_support/clients.ts";
import {
  discordAttachment,
  discordAttachmentCommand,
  discordDriver,
} from "./_support/drivers/discord.ts";
import { genericDriver } from "./_support/drivers/generic.ts";
import { googleChatDriver } from "./_support/drivers/google_chat.ts";
import { lineDriver } from "./_support/drivers/line.ts";
import { type Driver, encode, replies } from "./_support/drivers/mod.ts";
import { slackBotToken, slackDriver, slackFile, slackFileShare } from "./_support/drivers/slack.ts";
import { teamsDriver } from "./_support/drivers/teams.ts";
import {
  telegramBotToken,
  telegramDriver,
  telegramMediaUpdate,
} from "./_support/drivers/telegram.ts";
import { TWILIO_ACCOUNT_SID, twilioDriver } from "./_support/drivers/twilio.ts";
import {
  whatsappAccessToken,
  whatsappDriver,
  whatsappMediaMessage,
} from "./_support/drivers/whatsapp.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";
import { startFakeTranscriber } from "../lib/testing/fake_transcriber.ts";

/** The transcription endpoint voice notes go to. */
const transcriber = await startFakeTranscriber();
const LINE_VARS = lineDriver.vars();
/** How long a download may take here: short, so a held one costs the file little. */
const DOWNLOAD_TIMEOUT_MS = 2500;
// MEDIA bound, a small cap so that an oversize file is cheap, a short download deadline.
const baton = sharedBaton({
  media: true,
  vars: {
    ...telegramDriver.vars(),
    ...slackDriver.vars(),
    ...discordDriver.vars(),
    ...whatsappDriver.vars(),
    ...LINE_VARS,
    ...twilioDriver.vars(),
    ...teamsDriver.vars(),
    ...googleChatDriver.vars(),
    MEDIA_MAX_BYTES: "4000",
    MEDIA_DOWNLOAD_TIMEOUT_MS: String(DOWNLOAD_TIMEOUT_MS),
    TRANSCRIBE_BASE_URL: transcriber.url,
    TRANSCRIBE_MODEL: "whisper-test",
  },
});

/** What the fake token endpoint sells (Teams, Google Chat): any other bearer is refused. */
const BOUGHT_TOKEN = /^Bearer fake-access-token-[0-9]+$/;
const _utf8 = (text: string) => new TextEncoder().encode(text);

/** A file one case sends: what the platform states of it, its bytes, and how it is served. */
interface MatrixFile {
  kind: "voice" | "document";
  name: string;
  /** The MIME type the platform states. */
  type: string;
  bytes: Uint8Array;
  /** The size the platform states, where it states one (default the bytes' length). */
  size?: number;
  /** The download never answers (`FakeFile.hold`). */
  hold?: boolean;
}

/** One platform of the matrix: how a file and a text are sent there, and what it calls a voice note. */
interface Row {
  driver: Driver;
  /** The label a voice note's transcript carries for the model ("voice message", "audio <name>"). */
  voice(file: MatrixFile): string;
  /** Files go inline in the delivery and are checked at the door: refused with a 400 (the generic webhook). */
  inline?: true;
  /** The platform names no file (Twilio): a document is `[document: text]`. */
  unnamed?: true;
  /**
   * `file` alone in a message to `chat`, served on the fake with the auth the platform requires;
   * null when the platform cannot send it so (the generic webhook links https URLs only).
   */
  media(platform: FakePlatform, chat: string, file: MatrixFile): object | null;
  text(platform: FakePlatform, chat: string, text: string): object;
}

let _n = 0;
const next = () => ++_n;
const pad = (n: number, width: number) => String(n).padStart(width, "0");

const ROWS: Row[] = [
  {
    driver: telegramDriver,
    voice: () => "voice message",
    media(platform, chat, f) {
      const id = `mx-${next()}`;
      platform.serveTelegramFile(telegramBotToken, id, {
        bytes: f.bytes,
        ...(f.size ? { size: f.size } : {}),
        ...(f.hold ? { hold: true } : {}),
      });
      const file = {
        file_id: id,
        file_unique_id: `${id}-u`,
        file_size: f.size ?? f.bytes.length,
      };
      return telegramMediaUpdate(
        { chat, id: String(next()) },
        f.kind === "voice"
          ? { voice: { ...file, duration: 2, mime_type: f.type } }
          : { document: { ...file, file_name: f.name, mime_type: f.type } },
      );
    },
    text: (_, chat, text) => telegramDriver.shape({ chat, text, id: String(next()) }),
  },
  {
    driver: slackDriver,
    // A clip recorded in Slack is a voice note, whatever file name Slack gives it.
    voice: () => "voice message",
    media(platform, chat, f) {
      const id = `FMX${next()}`;
      const url = platform.serveFile(`/files-pri/T0TEST-${id}/download/${f.name}`, {
        bytes: f.bytes,
        bearer: slackBotToken,
        ...(f.hold ? { hold: true } : {}),
      });
      const file = slackFile(id, {
        url,
        name: f.name,
        mimetype: f.type,
        size: f.size ?? f.bytes.length,
        ...(f.kind === "voice" ? { subtype: "slack_audio" } : {}),
      });
      return slackFileShare({ chat, text: "", id: `1700000200.${pad(next(), 6)}` }, [file]);
    },
    text: (_, chat, text) => slackDriver.shape({ chat, text, id: `1700000200.${pad(next(), 6)}` }),
  },
  {
    driver: discordDriver,
    // A slash command takes an uploaded audio file, not a recorded voice message.
    voice: (f) => `audio ${f.name}`,
    media(platform, chat, f) {
      const n = next();
      const url = platform.serveFile(`/ephemeral-attachments/9/${n}/${f.name}`, {
        bytes: f.bytes,
        ...(f.hold ? { hold: true } : {}),
      });
      const attachment = discordAttachment(`17100000000000${pad(n, 5)}`, {
        url,
        filename: f.name,
        content_type: f.type,
        size: f.size ?? f.bytes.length,
      });
      return discordAttachmentCommand(
        { chat, text: "", id: `12200000000${pad(next(), 6)}` },
        [attachment],
      );
    },
    text: (_, chat, text) =>
      discordDriver.shape({ chat, text, id: `12200000000${pad(next(), 6)}` }),
  },
  {
    driver: whatsappDriver,
    voice: () => "voice message",
    media(platform, chat, f) {
      const id = `93000000000${pad(next(), 5)}`;
      platform.serveWhatsappMedia(whatsappAccessToken, id, {
        bytes: f.bytes,
        type: f.type,
        ...(f.size ? { size: f.size } : {}),
        ...(f.hold ? { hold: true } : {}),
      });
      const post = { chat, text: "", id: `wamid.MX${pad(next(), 6)}` };
      return f.kind === "voice"
        ? whatsappMediaMessage(post, "audio", { id, mime_type: f.type, voice: true })
        : whatsappMediaMessage(post, "document", { id, mime_type: f.type, filename: f.name });
    },
    text: (_, chat, text) => whatsappDriver.shape({ chat, text, id: `wamid.MX${pad(next(), 6)}` }),
  },
  {
    driver: lineDriver,
    voice: () => "voice message",
    media(platform, chat, f) {
      const id = `7${pad(next(), 13)}`;
      platform.serveFile(`/v2/bot/message/${id}/content`, {
        bytes: f.bytes,
        bearer: LINE_VARS.LINE_CHANNEL_ACCESS_TOKEN,
        ...(f.hold ? { hold: true } : {}),
      });
      const callback = lineDriver.shape({ chat, text: "", id }) as webhook.CallbackRequest;
      const event = callback.events[0] as webhook.MessageEvent;
      const message: webhook.AudioMessageContent | webhook.FileMessageContent = f.kind === "voice"
        ? { type: "audio", id, duration: 2000, contentProvider: { type: "line" } }
        : { type: "file", id, fileName: f.name, fileSize: f.size ?? f.bytes.length };
      return { ...callback, events: [{ ...event, message }] };
    },
    text: (_, chat, text) => lineDriver.shape({ chat, text, id: `8${pad(next(), 13)}` }),
  },
  {
    driver: twilioDriver,
    voice: () => "voice message",
    unnamed: true,
    media(platform, chat, f) {
      const n = next();
      const sid = `MM${pad(n, 32)}`;
      const url = platform.serveAuthorizedFile(
        `/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}/Messages/${sid}/Media/ME${pad(n, 32)}`,
        {
          bytes: f.bytes,
          authorization: `Basic ${btoa(`${TWILIO_ACCOUNT_SID}:${twilioDriver.credentials.token}`)}`,
          redirect: true,
          ...(f.hold ? { hold: true } : {}),
        },
      );
      return {
        ...twilioDriver.shape({ chat, text: "", id: sid }),
        NumMedia: "1",
        MediaUrl0: url,
        MediaContentType0: f.type,
      };
    },
    text: (_, chat, text) => twilioDriver.shape({ chat, text, id: `SM${pad(next(), 32)}` }),
  },
  {
    driver: teamsDriver,
    voice: (f) => `audio ${f.name}`,
    media(platform, chat, f) {
      teamsDriver.vars(platform);
      const n = next();
      const url = platform.serveAuthorizedFile(`/teams/v3/attachments/mx-${n}/views/original`, {
        bytes: f.bytes,
        authorization: BOUGHT_TOKEN,
        ...(f.hold ? { hold: true } : {}),
      });
      return {
        ...teamsDriver.shape({ chat, text: "", id: `1900${n}` }),
        attachments: [{ contentType: f.type, contentUrl: url, name: f.name }],
      };
    },
    text(platform, chat, text) {
      teamsDriver.vars(platform);
      return teamsDriver.shape({ chat, text, id: `1900${next()}` });
    },
  },
  {
    driver: googleChatDriver,
    voice: (f) => `audio ${f.name}`,
    media(platform, chat, f) {
      googleChatDriver.vars(platform); // Chat's signing key published on the fake
      const n = next();
      const resource = `ATT-MX${n}-res`;
      platform.serveAuthorizedFile(`/chat/v1/media/${resource}`, {
        bytes: f.bytes,
        authorization: BOUGHT_TOKEN,
        query: { alt: "media" },
        ...(f.hold ? { hold: true } : {}),
      });
      // deno-lint-ignore no-explicit-any
      const event: any = googleChatDriver.shape({ chat, text: "", id: `${chat}/messages/mx${n}` });
      event.message.attachment = [{
        name: `${chat}/messages/mx${n}/attachments/a1`,
        contentName: f.name,
        contentType: f.type,
        attachmentDataRef: { resourceName: resource },
        source: "UPLOADED_CONTENT",
      }];
      return event;
    },
    text(platform, chat, text) {
      googleChatDriver.vars(platform);
      return googleChatDriver.shape({ chat, text, id: `${chat}/messages/tx${next()}` });
    },
  },
  {
    driver: genericDriver,
    voice: () => "voice message",
    inline: true,
    // Only https links are fetched: the fake's loopback server cannot hold one.
    media: (_, chat, f) =>
      f.hold ? null : {
        session: chat,
        text: "",
        attachments: [{
          ...(f.kind === "voice" ? {} : { name: f.name }),
          type: f.type,
          data: encodeBase64(f.bytes),
        }],
      },
    text: (_, chat, text) => genericDriver.shape({ chat, text, id: "" }),
  },
];

/** A short tag of a row for names and file contents ("google-chat"). */
const tag = (row: Row) => row.driver.name;

/**
 * The model's answer, saying what it was sent: a transcript and its label, a document's name and
 * the code in it, else the user's words — so a chat's reply shows what reached the model.
 */
function _verdict(request: FakeModelRequest): string {
  const text = request.lastUserText;
  const heard = /\[([^\],]+)(?:, [0-9:]+)?\] hello from the voice note/.exec(text);
  if (heard) return `heard: ${heard[1]}`;
  const read = /\[document: ([^\]\n]+)\]\n[^]*?launch code is ([\w-]+)\./.exec(text);
  if (read) return `read ${read[1]}: ${read[2]}`;
  return `said: ${text}`;
}

/** One chat of a case: every answer it got so far, in order. */
interface Chat {
  row: Row;
  chat: string;
  answers(): string[];
  /** Sends `payload` and waits until it is answered and the session is idle again. */
  send(payload: object): Promise<void>;
}

/** A fresh chat on `row`'s platform, on the shared Worker. */
function openChat(worker: TestWorker, platform: FakePlatform, row: Row): Chat {
  const { driver } = row;
  const chat = driver.newChat();
  const inline: string[] = [];
  const answers = () => row.inline ? [...inline] : replies(driver, platform, chat);
  return {
    row,
    chat,
    answers,
    async send(payload) {
      const before = answers().length;
      const body = encode(driver, payload);
      const headers = await driver.sign(body, driver.credentials);
      const res = await worker.fetch(driver.path, { method: "POST", headers, body });
      const text = await res.text();
      if (row.inline) {
        // The generic webhook answers with the reply itself, or a 400 naming what it refused.
        const json = JSON.parse(text);
        inline.push(res.status === 200 ? json.reply : `${res.status} ${json.error?.message}`);
        return;
      }
      assertEquals(res.status, 200, `${driver.name}: ${text}`);
      await until(() => answers().length > before, `${driver.name}: an answer`, 30_000);
      await settled(worker, driver.session(chat));
    },
  };
}

/**
 * Runs `fn` for every row at once, each in a chat of its own; fails naming every row that failed
 * (one bad platform must not hide another).
 */
async function everyRow(
  worker: TestWorker,
  platform: FakePlatform,
  fn: (chat: Chat) => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled(
    ROWS.map((row) => fn(openChat(worker, platform, row))),
  );
  const failed = outcomes.flatMap((o, i) =>
    o.status === "rejected" ? [`${tag(ROWS[i])}: ${o.reason?.message ?? o.reason}`] : []
  );
  if (failed.length) {
    throw new Error(`${failed.length} of ${ROWS.length} platforms:\n${failed.join("\n")}`);
  }
}

/** Then "hello again" in the same chat is answered by the model, once: the session was not poisoned. */
async function nextMessageWorks(platform: FakePlatform, c: Chat): Promise<void> {
  const first = c.answers();
  await c.send(c.row.text(platform, c.chat, "hello again"));
  assertEquals(c.answers(), [...first, "said: hello again"]);
}

/** The one notice a file that could not be read gets on a chat platform, and nothing else. */
function expectNotice(c: Chat, detail: RegExp): void {
  const answers = c.answers();
  assertEquals(answers.length, 1, `one answer: ${JSON.stringify(answers)}`);
  // The notice alone, one line: no model reply after it, so the model was not called.
  assertMatch(answers[0], /^I couldn't read the document[^\n]*\.$/);
  assertMatch(answers[0], detail);
}

/** A voice note: the OGG header, then the row's name, so each platform's bytes are its own. */
const voiceBytes = (row: Row) =>
  Uint8Array.from([..._utf8("OggS"), 0, 2, 0, 0, 0, 0, ..._utf8(tag(row))]);

baton.test(
  "media matrix: a voice note on every platform is transcribed (its exact bytes), the model answers the labelled transcript once, and the next message works",
  async (worker, fake, platform) => {
    transcriber.reset();
    fake.script((req) => ({ kind: "text", text: _verdict(req) }));
    await everyRow(worker, platform, async (c) => {
      const file: MatrixFile = {
        kind: "voice",
        name: `voice-${tag(c.row)}.ogg`,
        type: "audio/ogg",
        bytes: voiceBytes(c.row),
      };
      await c.send(c.row.media(platform, c.chat, file)!);
      assertEquals(c.answers(), [`heard: ${c.row.voice(file)}`]);
      const sent = transcriber.requests.filter((r) =>
        r.bytes.length === file.bytes.length && r.bytes.every((b, i) => b === file.bytes[i])
      );
      assertEquals(sent.length, 1, "transcribed once, its exact bytes");
      await nextMessageWorks(platform, c);
    });
  },
);

baton.test(
  "media matrix: a text document on every platform reaches the model as its text, labelled with its name, answered once; the next message works",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: _verdict(req) }));
    await everyRow(worker, platform, async (c) => {
      const code = `${tag(c.row)}-4711`;
      const name = `notes-${tag(c.row)}.txt`;
      await c.send(
        c.row.media(platform, c.chat, {
          kind: "document",
          name,
          type: "text/plain",
          bytes: _utf8(`Meeting notes: the launch code is ${code}.\n`),
        })!,
      );
      assertEquals(c.answers(), [`read ${c.row.unnamed ? "text" : name}: ${code}`]);
      await nextMessageWorks(platform, c);
    });
  },
);

baton.test(
  "media matrix: a document over MEDIA_MAX_BYTES on every platform gets one short notice naming the limit and no model call (the generic webhook: a 400); the next message works",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: _verdict(req) }));
    await everyRow(worker, platform, async (c) => {
      await c.send(
        c.row.media(platform, c.chat, {
          kind: "document",
          name: `big-${tag(c.row)}.txt`,
          type: "text/plain",
          bytes: new Uint8Array(5000).fill(65),
        })!,
      );
      if (c.row.inline) {
        assertEquals(c.answers().length, 1);
        assertMatch(c.answers()[0], /^400 attachments\[0\]: .*MEDIA_MAX_BYTES/);
      } else {
        expectNotice(c, /MEDIA_MAX_BYTES/);
      }
      await nextMessageWorks(platform, c);
    });
  },
);

baton.test(
  "media matrix: a 'PDF' whose bytes are garbage on every platform gets one short notice and no model call (the generic webhook: a 400); the next message works",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: _verdict(req) }));
    const garbage = Uint8Array.from({ length: 300 }, (_, i) => (i * 7919 + 13) % 256);
    await everyRow(worker, platform, async (c) => {
      await c.send(
        c.row.media(platform, c.chat, {
          kind: "document",
          name: `report-${tag(c.row)}.pdf`,
          type: "application/pdf",
          bytes: garbage,
        })!,
      );
      if (c.row.inline) {
        assertEquals(c.answers().length, 1);
        assertMatch(c.answers()[0], /^400 attachments\[0\]: application\/pdf is not read/);
      } else {
        expectNotice(c, /not read|is not/);
      }
      await nextMessageWorks(platform, c);
    });
  },
);

baton.test(
  "media matrix: a download that never answers is given up after MEDIA_DOWNLOAD_TIMEOUT_MS on every platform: one short notice, no model call; the next message works",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: _verdict(req) }));
    await everyRow(worker, platform, async (c) => {
      const payload = c.row.media(platform, c.chat, {
        kind: "document",
        name: `slow-${tag(c.row)}.txt`,
        type: "text/plain",
        bytes: _utf8("never sent"),
        hold: true,
      });
      if (!payload) return; // the generic webhook fetches https links only
      await c.send(payload);
      expectNotice(c, /MEDIA_DOWNLOAD_TIMEOUT_MS/);
      await nextMessageWorks(platform, c);
    });
    assert(platform.fileCalls.length >= ROWS.length - 1, "every held download was asked for");
  },
);

baton.test("the fake transcription endpoint closes", async () => {
  await transcriber.close();
});

baton.done();

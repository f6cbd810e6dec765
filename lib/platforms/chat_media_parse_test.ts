// Tests for the media Slack, Discord and WhatsApp messages announce (slackMedia, discordMedia, whatsappMedia): kinds, links, names, stated types and sizes, nothing fetched; Deno.
import { assertEquals } from "@std/assert";
import { slackMedia } from "./slack_media.ts";
import { discordMedia } from "./discord_media.ts";
import { whatsappMedia } from "./whatsapp_media.ts";

Deno.test("slackMedia() announces each file: the download link first, a Slack clip as a voice note, a file without a link with none", () => {
  const event = {
    type: "message",
    subtype: "file_share",
    files: [
      {
        id: "F1",
        name: "dot.png",
        mimetype: "image/png",
        size: 70,
        url_private: "https://files.slack.com/files-pri/T1-F1/dot.png",
        url_private_download: "https://files.slack.com/files-pri/T1-F1/download/dot.png",
      },
      {
        id: "F2",
        name: "audio_message.webm",
        mimetype: "audio/webm; codecs=opus",
        subtype: "slack_audio",
        size: 900,
        url_private: "https://files.slack.com/files-pri/T1-F2/audio_message.webm",
      },
      { id: "F3", mode: "hidden_by_limit" },
      "not a file",
    ],
  };
  assertEquals(slackMedia(event), [
    {
      platform: "slack",
      file: "https://files.slack.com/files-pri/T1-F1/download/dot.png",
      kind: "photo",
      name: "dot.png",
      type: "image/png",
      size: 70,
    },
    {
      platform: "slack",
      file: "https://files.slack.com/files-pri/T1-F2/audio_message.webm",
      kind: "voice",
      name: "audio_message.webm",
      type: "audio/webm",
      size: 900,
    },
    { platform: "slack", file: "", kind: "document" },
  ]);
  assertEquals(slackMedia({ type: "message", text: "hi" }), []);
});

Deno.test("discordMedia() announces the attachment options in order, a subcommand's too, an unresolved id left out", () => {
  const data = {
    name: "ask",
    options: [
      { name: "prompt", type: 3, value: "look" },
      { name: "file", type: 11, value: "A1" },
      { name: "sub", type: 1, options: [{ name: "doc", type: 11, value: "A2" }] },
      { name: "ghost", type: 11, value: "A9" },
    ],
    resolved: {
      attachments: {
        A2: {
          id: "A2",
          filename: "notes.txt",
          content_type: "text/plain; charset=utf-8",
          size: 12,
          url: "https://cdn.discordapp.com/ephemeral-attachments/1/2/notes.txt",
        },
        A1: {
          id: "A1",
          filename: "cat.jpg",
          content_type: "image/jpeg",
          size: 5,
          url: "https://cdn.discordapp.com/ephemeral-attachments/1/1/cat.jpg",
        },
      },
    },
  };
  assertEquals(discordMedia(data), [
    {
      platform: "discord",
      file: "https://cdn.discordapp.com/ephemeral-attachments/1/1/cat.jpg",
      kind: "photo",
      name: "cat.jpg",
      type: "image/jpeg",
      size: 5,
    },
    {
      platform: "discord",
      file: "https://cdn.discordapp.com/ephemeral-attachments/1/2/notes.txt",
      kind: "document",
      name: "notes.txt",
      type: "text/plain",
      size: 12,
    },
  ]);
  assertEquals(discordMedia({ options: [{ name: "prompt", type: 3, value: "hi" }] }), []);
});

Deno.test("whatsappMedia() announces an image with its caption, a voice note, a document by name, an animated sticker; a text is none", () => {
  assertEquals(
    whatsappMedia({
      type: "image",
      image: { id: "111", mime_type: "image/jpeg", caption: "look" },
    }),
    {
      media: { platform: "whatsapp", file: "111", kind: "photo", type: "image/jpeg" },
      caption: "look",
    },
  );
  assertEquals(
    whatsappMedia({
      type: "audio",
      audio: { id: "222", mime_type: "audio/ogg; codecs=opus", voice: true },
    }),
    { media: { platform: "whatsapp", file: "222", kind: "voice", type: "audio/ogg" }, caption: "" },
  );
  assertEquals(
    whatsappMedia({
      type: "document",
      document: { id: "333", mime_type: "application/pdf", filename: "invoice.pdf" },
    })?.media,
    {
      platform: "whatsapp",
      file: "333",
      kind: "document",
      name: "invoice.pdf",
      type: "application/pdf",
    },
  );
  assertEquals(
    whatsappMedia({
      type: "sticker",
      sticker: { id: "444", mime_type: "image/webp", animated: true },
    })
      ?.media.kind,
    "animated_sticker",
  );
  assertEquals(whatsappMedia({ type: "text", text: { body: "hi" } }), null);
  assertEquals(whatsappMedia({ type: "image", image: { id: "../etc" } }), null);
});

// Google Chat files out: a file part as a message card — an image widget showing a JPEG or PNG from the signed /media URL, another file named with a button that opens its link; runtime-neutral.
import { fileLabel, fileNote, type OutgoingFile } from "../chat/mod.ts";
import { fileFits, JPEG_PNG } from "./_file_out.ts";

/** Chat's recommended largest image for a card's image widget ("Add an image", Chat docs). */
const _IMAGE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * What a Chat message carrying `file` adds to its text: `cardsV2` with one card, and
 * `fallbackText` (its note with the link) for where cards are not shown, such as notifications;
 * null without a signed link, which the caller sends as the file's note in text. An app cannot
 * upload an attachment with app authentication (`media.upload` needs a user's), so the card is
 * the documented way: an `image` widget for a JPEG or PNG up to 2 MB behind an https link (what
 * the widget shows), else the file's name, type and size with a button that opens its link.
 */
export function googleChatFileMessage(
  file: OutgoingFile,
): { cardsV2: unknown[]; fallbackText: string } | null {
  if (!file.url) return null;
  const name = file.name ?? "file";
  // The widget shows images from https only: a plain-http PUBLIC_URL (local dev) gets the button.
  const widgets = fileFits(file, JPEG_PNG, _IMAGE_MAX_BYTES) && file.url.startsWith("https://")
    ? [{ image: { imageUrl: file.url, altText: name } }]
    : [
      { textParagraph: { text: fileLabel(file) } },
      {
        buttonList: {
          buttons: [{ text: `Open ${name}`, onClick: { openLink: { url: file.url } } }],
        },
      },
    ];
  return {
    cardsV2: [{ cardId: "baton-file", card: { sections: [{ widgets }] } }],
    fallbackText: fileNote(file, file.url),
  };
}

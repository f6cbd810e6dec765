// Teams files out: a file part as a Bot Framework activity — an image as an inline attachment whose contentUrl is the signed /media URL, another file as an Adaptive Card with a link to it; runtime-neutral.
import { fileLabel, type OutgoingFile } from "../chat/mod.ts";
import { JPEG_PNG } from "./_file_out.ts";

/**
 * The images Teams renders inline from a hosted `contentUrl` in personal chats, group chats and
 * channels alike ("Send and receive inline images", Teams platform docs): JPEG, PNG and GIF.
 */
const _INLINE_TYPES: ReadonlySet<string> = new Set([...JPEG_PNG, "image/gif"]);
/** Adaptive Cards 1.2, as the adapter's approval cards: one every Teams client renders. */
const _CARD_VERSION = "1.2";

/**
 * The message activity that carries `file` on Teams, `caption` its text; null without a signed
 * link, which the caller sends as the file's note in text. An image goes as an inline attachment
 * (`contentType` the image's type, `contentUrl` the link Teams fetches): no upload, no Graph
 * permission, every conversation type. Any other file as a card naming it with an
 * `Action.OpenUrl` to the link: a bot can put a document in a chat only through OneDrive (a
 * file consent card, personal chats alone) or SharePoint, which baton has no access to.
 */
export function teamsFileActivity(
  file: OutgoingFile,
  caption: string,
  replyTo: string | undefined,
): Record<string, unknown> | null {
  if (!file.url) return null;
  const name = file.name ?? "file";
  const attachment = _INLINE_TYPES.has(file.type)
    ? { contentType: file.type, contentUrl: file.url, name }
    : {
      contentType: "application/vnd.microsoft.card.adaptive",
      content: {
        type: "AdaptiveCard",
        $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
        version: _CARD_VERSION,
        body: [{ type: "TextBlock", text: fileLabel(file), wrap: true }],
        actions: [{ type: "Action.OpenUrl", title: `Open ${name}`, url: file.url }],
      },
    };
  return {
    type: "message",
    // No caption: the attachment alone (an empty text would show as an empty line).
    ...(caption ? { text: caption, textFormat: "markdown" } : {}),
    attachments: [attachment],
    ...(replyTo ? { replyToId: replyTo } : {}),
  };
}

// The raw MIME of a mail baton sends: threading headers, a plain-text part and a simple HTML part, UTF-8 in base64; runtime-neutral.
import { encodeBase64 } from "../runtime/mod.ts";

/** What one outgoing mail says. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  /** `<…>`, fixed per outbox row (see `outgoingMessageId`). */
  messageId: string;
  /** The mail answered, and the thread's ids (`<…>` each, oldest first). */
  inReplyTo: string;
  references: readonly string[];
  text: string;
  date: Date;
}

/**
 * The mail as RFC 5322 text with CRLF line ends: `multipart/alternative` of the text and its HTML
 * rendering (paragraphs, line breaks, everything escaped). Marked `Auto-Submitted: auto-replied`
 * (RFC 3834): another robot that honours it never answers, so two bots cannot mail each other
 * for ever. Header values are taken as given, without CR or LF (a header cannot be injected).
 */
export function replyMime(mail: OutgoingMail): string {
  const boundary = `=_baton_${crypto.randomUUID().replaceAll("-", "")}`;
  const clean = (value: string) => value.replace(/[\r\n]+/g, " ");
  const headers: [string, string][] = [
    ["From", clean(mail.from)],
    ["To", clean(mail.to)],
    ["Subject", encodedWord(clean(mail.subject))],
    ["Date", mail.date.toUTCString().replace("GMT", "+0000")],
    ["Message-ID", clean(mail.messageId)],
    ["In-Reply-To", clean(mail.inReplyTo)],
    ["References", _foldRefs(clean([...mail.references].join(" ")))],
    ["Auto-Submitted", "auto-replied"],
    ["MIME-Version", "1.0"],
    ["Content-Type", `multipart/alternative; boundary="${boundary}"`],
  ];
  const lines = headers
    .filter(([, value]) => value !== "")
    .map(([name, value]) => `${name}: ${value}`);
  const part = (type: string, body: string) => [
    `--${boundary}`,
    `Content-Type: ${type}; charset=utf-8`,
    "Content-Transfer-Encoding: base64",
    "",
    _base64Lines(body),
  ];
  return [
    ...lines,
    "",
    ...part("text/plain", mail.text),
    ...part("text/html", htmlBody(mail.text)),
    `--${boundary}--`,
    "",
  ].join("\r\n");
}

/** The text as a simple HTML document: blank lines part paragraphs, single new lines are `<br>`. */
export function htmlBody(text: string): string {
  const paragraphs = text.replace(/\r\n?/g, "\n").split(/\n{2,}/).map((p) =>
    `<p>${_escape(p).replace(/\n/g, "<br>\n")}</p>`
  );
  return `<!DOCTYPE html>\n<html><body>\n${paragraphs.join("\n")}\n</body></html>\n`;
}

/** A header text as is when it is printable ASCII, else as RFC 2047 encoded words (UTF-8, B). */
export function encodedWord(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  // Whole characters per word, each word's encoding at most 75 characters.
  const words: string[] = [];
  let chunk = "";
  for (const char of text) {
    if (new TextEncoder().encode(chunk + char).length > 45) {
      words.push(chunk);
      chunk = "";
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${encodeBase64(new TextEncoder().encode(w))}?=`)
    .join("\r\n ");
}

function _escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function _base64Lines(text: string): string {
  const encoded = encodeBase64(new TextEncoder().encode(text));
  return encoded.match(/.{1,76}/g)?.join("\r\n") ?? "";
}

// A long References list folded between its ids (a line stays under 998 characters).
function _foldRefs(value: string): string {
  return value.length > 900 ? value.replace(/> </g, ">\r\n <") : value;
}

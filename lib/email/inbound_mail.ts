// One inbound mail read with postal-mime into what baton decides on: who, which thread, what text, the headers that say how it came; runtime-neutral.
import type { MailAttachment } from "./mail_attachments.ts";

/** Largest mail read (Email Routing accepts up to 25 MiB; a turn needs the text, not the rest). */
export const MAX_MAIL_BYTES = 10 * 1024 * 1024;

/** One header line as it came, its name lower-cased; in the message's order (topmost first). */
export interface MailHeader {
  key: string;
  value: string;
}

/** An inbound mail, parsed. */
export interface InboundMail {
  /** The `From:` address, lower-cased: who the mail says wrote it (what access control names). */
  from: string;
  /** The `From:` display name, else the address. */
  name: string;
  /** The envelope sender (SMTP `MAIL FROM`, the return path); "" for a bounce's `<>`. */
  returnPath: string;
  /** The envelope recipient (SMTP `RCPT TO`): the address the mail was sent to. */
  to: string;
  /** `Message-ID` with its angle brackets; null when the mail has none. */
  messageId: string | null;
  /** `In-Reply-To`'s ids, then `References`' ids, each `<…>`. */
  inReplyTo: string[];
  references: string[];
  subject: string;
  /** The plain-text body (the HTML part's text where there is no plain part). */
  text: string;
  /** The top-level `Content-Type`'s media type, lower-cased (`multipart/report` for a bounce). */
  contentType: string;
  headers: readonly MailHeader[];
  /** Its attachments, inline images (`cid:`) included, in the mail's order. */
  attachments: MailAttachment[];
}

/** A mail that cannot be read: refused (SMTP 5xx) without a turn. */
export class MailError extends Error {}

/** The `<id>`s in a header value (`In-Reply-To`, `References`), in order, each once. */
export function messageIds(value: string | undefined | null): string[] {
  if (!value) return [];
  return [...new Set(value.match(/<[^<>\s]{1,250}>/g) ?? [])];
}

/**
 * Parses `raw` (the whole message as Email Routing hands it) sent from `envelope.from` to
 * `envelope.to`. Throws `MailError` when it is too large, not a message at all, or names no
 * sender address.
 */
export async function readMail(
  raw: Uint8Array,
  envelope: { from: string; to: string },
): Promise<InboundMail> {
  if (raw.byteLength > MAX_MAIL_BYTES) {
    throw new MailError(`message over ${MAX_MAIL_BYTES} bytes`);
  }
  // Imported on the first mail, not at start-up: a Worker that never receives mail never evaluates it.
  const { default: PostalMime } = await import("postal-mime");
  let parsed;
  try {
    parsed = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  } catch (error) {
    throw new MailError(`message could not be parsed: ${(error as Error).message}`);
  }
  const headers = parsed.headers.map((h) => ({ key: h.key.toLowerCase(), value: h.value }));
  if (!headers.length) throw new MailError("message has no header");
  const from = (parsed.from?.address ?? "").trim().toLowerCase();
  if (!_ADDRESS.test(from)) throw new MailError("From: names no valid address");
  const contentType = (headers.find((h) => h.key === "content-type")?.value ?? "text/plain")
    .split(";")[0].trim().toLowerCase();
  const messageId = messageIds(parsed.messageId)[0] ?? null;
  return {
    from,
    name: (parsed.from?.name ?? "").trim() || from,
    returnPath: envelope.from.trim().replace(/^<>$/, ""),
    to: envelope.to.trim().toLowerCase(),
    messageId,
    inReplyTo: messageIds(parsed.inReplyTo),
    references: messageIds(parsed.references),
    subject: (parsed.subject ?? "").trim(),
    text: parsed.text ?? (parsed.html ? _htmlText(parsed.html) : ""),
    contentType,
    headers,
    attachments: parsed.attachments.map((a) => ({
      ...(a.filename ? { name: a.filename } : {}),
      type: a.mimeType.toLowerCase(),
      bytes: typeof a.content === "string"
        ? new TextEncoder().encode(a.content)
        : new Uint8Array(a.content),
    })),
  };
}

/** An address baton can answer: one `@`, no spaces or brackets, at most 254 characters. */
const _ADDRESS = /^(?=.{3,254}$)[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

// A mail with only an HTML part: its text, roughly (block ends as new lines, tags dropped).
function _htmlText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, "")
    .replace(/<blockquote[\s\S]*?<\/blockquote>/gi, "")
    .replace(/<br\s*\/?>|<\/(p|div|li|tr|h[1-6])>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

// The email tests' driver: RFC 5322 mails written out by hand, handed to the Worker's email() handler as Email Routing would, and the mails it sent read back parsed; Deno.
import PostalMime from "postal-mime";
import { until } from "./clients.ts";
import type { TestWorker } from "./worker.ts";

/** The address the test Worker answers from (`EMAIL_FROM`) and is written to. */
export const BOT_ADDRESS = "bot@baton.example";

/** A passing Authentication-Results, as Email Routing adds it on top of a genuine mail. */
export const AUTH_PASS = "mx.cloudflare.net; dkim=pass header.d=example.com header.s=s1; " +
  "spf=pass smtp.mailfrom=example.com; dmarc=pass header.from=example.com";

/** An RFC 5322 message (written out by hand: no MIME builder is a dependency), CRLF line ends. */
export function mailText(m: {
  from: string;
  id?: string;
  subject?: string;
  body: string;
  inReplyTo?: string;
  references?: string;
  headers?: Record<string, string>;
}): string {
  const headers: Record<string, string> = {
    "Authentication-Results": AUTH_PASS,
    From: `Someone <${m.from}>`,
    To: BOT_ADDRESS,
    Subject: m.subject ?? "Plans",
    Date: "Wed, 1 Jul 2026 10:00:00 +0000",
    ...(m.id ? { "Message-ID": m.id } : {}),
    ...(m.inReplyTo ? { "In-Reply-To": m.inReplyTo } : {}),
    ...(m.references ? { References: m.references } : {}),
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=utf-8",
    ...m.headers,
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n");
  return `${head}\r\n\r\n${m.body.replace(/\n/g, "\r\n")}\r\n`;
}

/** Hands `raw` to the Worker's email() handler as Email Routing would (wrangler's local endpoint). */
export function deliverMail(worker: TestWorker, raw: string, from: string): Promise<Response> {
  const query = new URLSearchParams({ from, to: BOT_ADDRESS });
  return worker.fetch(`/cdn-cgi/handler/email?${query}`, { method: "POST", body: raw });
}

/** The session key of `address` in the thread whose first mail is `rootId`. */
export async function mailSessionKey(address: string, rootId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(rootId));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `email:${address}:${hex.slice(0, 16)}`;
}

/** The mails sent to `to` so far, parsed. */
export async function mailsTo(worker: TestWorker, to: string) {
  const parsed = await Promise.all(worker.mails().map((raw) => PostalMime.parse(raw)));
  return parsed.filter((m) => m.to?.some((a) => a.address === to));
}

/** Waits until `n` mails were sent to `to` (30 s), and returns them all, parsed. */
export async function untilMails(worker: TestWorker, to: string, n: number) {
  await until(async () => (await mailsTo(worker, to)).length >= n, `${n} mails to ${to}`, 30_000);
  return await mailsTo(worker, to);
}

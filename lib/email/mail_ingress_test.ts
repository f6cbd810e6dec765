// Unit tests of mailIngress() and its parts: robots dropped, authentication, threads, new text, the reply's MIME; Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import PostalMime from "postal-mime";
import { mailIngress, newText, normalizedSubject, replyMime } from "./mod.ts";

const _AUTH = "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=example.com; " +
  "spf=pass smtp.mailfrom=example.com; dmarc=pass header.from=example.com";

function _raw(extra: string[], body = "Hello there.", auth = _AUTH): Uint8Array {
  const head = [
    auth,
    "From: Alice <Alice@Example.com>",
    "To: bot@baton.example",
    "Subject: Re: [team] Fwd: Plans",
    "Message-ID: <m1@example.com>",
    ...extra,
  ].filter(Boolean);
  return new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n${body}\r\n`);
}

const _ENV = { EMAIL_FROM: "bot@baton.example" };
const _ENVELOPE = { from: "alice@example.com", to: "bot@baton.example" };

Deno.test("mailIngress() takes a person's mail as a complete email event", async () => {
  const ingress = await mailIngress(_raw([]), _ENVELOPE, _ENV);
  assert(ingress.kind === "message");
  const { message } = ingress;
  assertMatch(message.sessionKey, /^email:alice@example\.com:[0-9a-f]{16}$/);
  assertEquals(message.deliveryKey, "email:<m1@example.com>");
  assertEquals(message.sender, {
    platform: "email",
    user: "alice@example.com",
    name: "Alice",
    direct: true,
  });
  assertEquals(message.reply.subject, "Re: [team] Fwd: Plans");
  assertEquals(message.reply.in_reply_to, "<m1@example.com>");
});

Deno.test("mailIngress() drops bounces, auto-replies and list mail unanswered", async () => {
  const robots: [string[], { from: string; to: string }][] = [
    [["Auto-Submitted: auto-replied"], _ENVELOPE],
    [["Precedence: junk"], _ENVELOPE],
    [["X-Autoreply: yes"], _ENVELOPE],
    [["List-Unsubscribe: <mailto:u@example.com>"], _ENVELOPE],
    [[], { from: "", to: "bot@baton.example" }],
    [["Content-Type: multipart/report; report-type=delivery-status; boundary=x"], _ENVELOPE],
  ];
  for (const [headers, envelope] of robots) {
    assertEquals((await mailIngress(_raw(headers), envelope, _ENV)).kind, "drop", headers.join());
  }
  assertEquals((await mailIngress(_raw(["Auto-Submitted: no"]), _ENVELOPE, _ENV)).kind, "message");
});

Deno.test("mailIngress() rejects unauthenticated mail unless EMAIL_REQUIRE_AUTH=off", async () => {
  const unaligned = "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=evil.example; " +
    "spf=pass smtp.mailfrom=evil.example";
  for (
    const auth of [
      unaligned,
      "",
      "Authentication-Results: mx; dmarc=fail; dkim=pass header.d=example.com",
    ]
  ) {
    assertEquals((await mailIngress(_raw([], "Hi", auth), _ENVELOPE, _ENV)).kind, "reject", auth);
    assertEquals(
      (await mailIngress(_raw([], "Hi", auth), _ENVELOPE, { ..._ENV, EMAIL_REQUIRE_AUTH: "off" }))
        .kind,
      "message",
    );
  }
  // Only the topmost results count: a passing one the sender wrote below is not believed.
  const below = `${unaligned}\r\n${_AUTH}`;
  assertEquals((await mailIngress(_raw([], "Hi", below), _ENVELOPE, _ENV)).kind, "reject");
});

Deno.test("mailIngress() reads only EMAIL_ALLOWED_DOMAINS when set", async () => {
  const env = { ..._ENV, EMAIL_ALLOWED_DOMAINS: "corp.example, Example.com" };
  assertEquals((await mailIngress(_raw([]), _ENVELOPE, env)).kind, "message");
  const other = { ...env, EMAIL_ALLOWED_DOMAINS: "corp.example" };
  assertEquals((await mailIngress(_raw([]), _ENVELOPE, other)).kind, "drop");
});

Deno.test("mailIngress() puts a reply in its thread's session, by References or by baton's id", async () => {
  const first = await mailIngress(_raw([]), _ENVELOPE, _ENV);
  assert(first.kind === "message");
  const byRefs = await mailIngress(
    _raw(["In-Reply-To: <m0@example.com>", "References: <m1@example.com> <m0@example.com>"]),
    _ENVELOPE,
    _ENV,
  );
  assert(byRefs.kind === "message");
  assertEquals(byRefs.message.sessionKey, first.message.sessionKey);
  const ours =
    `<baton.${first.message.reply.thread}.${first.message.reply.tag}.o3-abc@baton.example>`;
  const byOurs = await mailIngress(_raw([`In-Reply-To: ${ours}`]), _ENVELOPE, _ENV);
  assert(byOurs.kind === "message");
  assertEquals(byOurs.message.sessionKey, first.message.sessionKey);
});

Deno.test("mailIngress() rejects a mail without a sender address, and drops one with no new text", async () => {
  const bad = new TextEncoder().encode("From: nobody\r\nMessage-ID: <x@y>\r\n\r\nHi\r\n");
  assertEquals((await mailIngress(bad, _ENVELOPE, { EMAIL_REQUIRE_AUTH: "off" })).kind, "reject");
  assertEquals((await mailIngress(_raw([], "> only quoted"), _ENVELOPE, _ENV)).kind, "drop");
});

Deno.test("newText() cuts the quoted history and the signature", () => {
  assertEquals(
    newText("Yes.\r\n\r\nOn Wed, 1 Jul 2026, Bot <b@x>\r\nwrote:\r\n> Question?\r\n"),
    "Yes.",
  );
  assertEquals(newText("Fine\n-- \nAlice\nCEO"), "Fine");
  assertEquals(newText("Ok\n-----Original Message-----\nFrom: x"), "Ok");
  assertEquals(newText("Ok\nFrom: Bot\nSent: today\nSubject: x"), "Ok");
});

Deno.test("normalizedSubject() drops reply and forward prefixes and tags", () => {
  assertEquals(normalizedSubject("Re: AW: [team] Fwd:  Plans  Now"), "plans now");
});

Deno.test("replyMime() is a threaded multipart mail postal-mime reads back", async () => {
  const raw = replyMime({
    from: "bot@baton.example",
    to: "alice@example.com",
    subject: "Re: Pläne\r\nBcc: evil@example.com",
    messageId: "<baton.0123456789abcdef.01234567.o1-x@baton.example>",
    inReplyTo: "<m1@example.com>",
    references: ["<m0@example.com>", "<m1@example.com>"],
    text: "Grüße <b>\n\nline two",
    date: new Date(0),
  });
  const mail = await PostalMime.parse(raw);
  assertEquals(mail.subject, "Re: Pläne Bcc: evil@example.com");
  assertEquals(mail.bcc, undefined);
  assertEquals(mail.inReplyTo, "<m1@example.com>");
  assertEquals(mail.references, "<m0@example.com> <m1@example.com>");
  assertEquals(mail.text?.trim(), "Grüße <b>\n\nline two");
  assert(mail.html?.includes("<p>Grüße &lt;b&gt;</p>"));
  assertEquals(mail.headers.find((h) => h.key === "auto-submitted")?.value, "auto-replied");
});

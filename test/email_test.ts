// Workerd tests of email as a way in: Email Routing's handler endpoint in, the local send_email binding out (threads, dedup, robots, pairing, refusals); Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import PostalMime from "postal-mime";
import { sessionState, settled, until } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// Listed senders write; anyone else is a stranger who gets a pairing code.
const baton = sharedBaton({
  email: true,
  vars: {
    ACCESS_POLICY: "pairing",
    ALLOWED_USERS: "email:alice@example.com,email:bob@example.com,email:carol@example.com," +
      "email:dave@example.com,email:frank@example.com",
    EMAIL_FROM: "bot@baton.example",
  },
});

/** Fails unless `text` contains `part`. */
function _includes(text: string, part: string): void {
  assert(text.includes(part), `expected ${JSON.stringify(part)} in ${JSON.stringify(text)}`);
}

/** A passing Authentication-Results, as Email Routing adds it on top of a genuine mail. */
const _PASS = "mx.cloudflare.net; dkim=pass header.d=example.com header.s=s1; " +
  "spf=pass smtp.mailfrom=example.com; dmarc=pass header.from=example.com";

/** An RFC 5322 message (written out by hand: no MIME builder is a dependency), CRLF line ends. */
function _mail(m: {
  from: string;
  id?: string;
  subject?: string;
  body: string;
  inReplyTo?: string;
  references?: string;
  headers?: Record<string, string>;
}): string {
  const headers: Record<string, string> = {
    "Authentication-Results": _PASS,
    From: `Someone <${m.from}>`,
    To: "bot@baton.example",
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

/** Hands `raw` to the Worker's email() handler as Email Routing would. */
function _deliver(worker: TestWorker, raw: string, from: string): Promise<Response> {
  const query = new URLSearchParams({ from, to: "bot@baton.example" });
  return worker.fetch(`/cdn-cgi/handler/email?${query}`, { method: "POST", body: raw });
}

async function _sessionKey(address: string, rootId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(rootId));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `email:${address}:${hex.slice(0, 16)}`;
}

/** The mails sent to `to` so far, parsed. */
async function _mailsTo(worker: TestWorker, to: string) {
  const parsed = await Promise.all(worker.mails().map((raw) => PostalMime.parse(raw)));
  return parsed.filter((m) => m.to?.some((a) => a.address === to));
}

async function _untilMails(worker: TestWorker, to: string, n: number) {
  await until(async () => (await _mailsTo(worker, to)).length >= n, `${n} mails to ${to}`, 30_000);
  return await _mailsTo(worker, to);
}

baton.test(
  "email() a thread of three mails is one session, each reply threaded (In-Reply-To, References, Re:)",
  async (worker, fake) => {
    const first = "<m1.thread@example.com>";
    const res = await _deliver(
      worker,
      _mail({ from: "alice@example.com", id: first, body: "Pack the tent." }),
      "alice@example.com",
    );
    assertEquals(res.status, 200, await res.text());
    const [reply] = await _untilMails(worker, "alice@example.com", 1);
    assertEquals(reply.subject, "Re: Plans");
    assertEquals(reply.inReplyTo, first);
    _includes(reply.references ?? "", first);
    assertEquals(reply.from?.address, "bot@baton.example");
    _includes(reply.text ?? "", "Pack the tent.");
    _includes(reply.html ?? "", "<p>Pack the tent.</p>");
    const ours = reply.messageId!;
    assertMatch(ours, /^<baton\.[0-9a-f]{16}\./);

    // The second answers baton's reply, quoting it; the third names only the thread's first mail.
    const second = _mail({
      from: "alice@example.com",
      id: "<m2.thread@example.com>",
      subject: "Re: Plans",
      inReplyTo: ours,
      references: `${first} ${ours}`,
      body:
        "And the stove.\n\nOn Wed, 1 Jul 2026 at 10:01, Bot <bot@baton.example> wrote:\n> Pack the tent.\n\n-- \nAlice",
    });
    assertEquals((await _deliver(worker, second, "alice@example.com")).status, 200);
    await _untilMails(worker, "alice@example.com", 2);
    const third = _mail({
      from: "alice@example.com",
      id: "<m3.thread@example.com>",
      subject: "Re: Plans",
      inReplyTo: "<m2.thread@example.com>",
      references: first,
      body: "And matches.",
    });
    assertEquals((await _deliver(worker, third, "alice@example.com")).status, 200);
    const mails = await _untilMails(worker, "alice@example.com", 3);
    const key = await _sessionKey("alice@example.com", first);
    await settled(worker, key);
    const users = (await sessionState(worker, key)).messages.filter((m) => m.role === "user")
      .map((m) => m.content);
    assertEquals(users, ["Pack the tent.", "And the stove.", "And matches."]);
    // The model saw the thread's history with the third mail.
    const last = fake.requests.find((r) => r.lastUserText === "And matches.")!;
    _includes(JSON.stringify(last.body.messages), "And the stove.");
    assertEquals(mails[2].inReplyTo, "<m3.thread@example.com>");
    _includes(mails[2].references ?? "", first);
  },
);

baton.test(
  "email() the same Message-ID delivered twice runs one turn and sends one reply",
  async (worker, fake) => {
    const raw = _mail({
      from: "bob@example.com",
      id: "<twice@example.com>",
      body: "Only once, please.",
    });
    assertEquals((await _deliver(worker, raw, "bob@example.com")).status, 200);
    assertEquals((await _deliver(worker, raw, "bob@example.com")).status, 200);
    await _untilMails(worker, "bob@example.com", 1);
    await settled(worker, await _sessionKey("bob@example.com", "<twice@example.com>"));
    assertEquals(fake.requests.filter((r) => r.lastUserText === "Only once, please.").length, 1);
    assertEquals((await _mailsTo(worker, "bob@example.com")).length, 1);
  },
);

baton.test(
  "email() an auto-reply, a bounce and a list mail start nothing and are not answered",
  async (worker, fake) => {
    const robots = [
      _mail({
        from: "carol@example.com",
        id: "<auto@example.com>",
        body: "I am away.",
        headers: { "Auto-Submitted": "auto-replied" },
      }),
      _mail({
        from: "carol@example.com",
        id: "<list@example.com>",
        body: "Newsletter.",
        headers: { "List-Id": "<news.example.com>" },
      }),
      _mail({
        from: "carol@example.com",
        id: "<bulk@example.com>",
        body: "Offer.",
        headers: { Precedence: "bulk" },
      }),
    ];
    for (const raw of robots) {
      assertEquals(
        (await _deliver(worker, raw, "carol@example.com")).status,
        200,
      );
    }
    const bounce = _mail({
      from: "mailer-daemon@example.com",
      id: "<bounce@example.com>",
      body: "Delivery failed.",
      headers: { "Content-Type": 'multipart/report; report-type=delivery-status; boundary="b"' },
    });
    assertEquals((await _deliver(worker, bounce, "mailer-daemon@example.com")).status, 200);
    // Each handler call returned after its decision: a stored mail would be in its session now.
    for (const id of ["<auto@example.com>", "<list@example.com>", "<bulk@example.com>"]) {
      const state = await sessionState(worker, await _sessionKey("carol@example.com", id));
      assertEquals([state.messages.length, state.queued, state.running], [0, 0, false]);
    }
    // A person's mail after them is answered: the robots' would have been answered before it.
    const raw = _mail({
      from: "carol@example.com",
      id: "<person@example.com>",
      body: "A real question.",
    });
    assertEquals((await _deliver(worker, raw, "carol@example.com")).status, 200);
    const mails = await _untilMails(worker, "carol@example.com", 1);
    assertEquals(mails.map((m) => m.inReplyTo), ["<person@example.com>"]);
    assert(
      !fake.requests.some((r) => /away|Newsletter|Offer|Delivery failed/.test(r.lastUserText)),
    );
    assertEquals((await _mailsTo(worker, "mailer-daemon@example.com")).length, 0);
  },
);

baton.test("email() a stranger gets a pairing code by mail, and no turn", async (worker, fake) => {
  const raw = _mail({ from: "eve@example.com", id: "<stranger@example.com>", body: "Let me in." });
  assertEquals((await _deliver(worker, raw, "eve@example.com")).status, 200);
  const [notice] = await _untilMails(worker, "eve@example.com", 1);
  assertMatch(notice.text ?? "", /pairing code to its owner: [A-Z0-9-]+/);
  assertEquals(notice.inReplyTo, "<stranger@example.com>");
  assertEquals(notice.subject, "Re: Plans");
  assert(!fake.requests.some((r) => r.lastUserText === "Let me in."));
});

baton.test(
  "email() malformed or unauthenticated mail is refused without a turn",
  async (worker, fake) => {
    const noSender = _mail({
      from: "dave@example.com",
      id: "<bad@example.com>",
      body: "Broken.",
      headers: { From: "not an address" },
    });
    const refused = await _deliver(worker, noSender, "dave@example.com");
    assertEquals(refused.status, 400);
    _includes(await refused.text(), "From: names no valid address");
    const forged = _mail({
      from: "dave@example.com",
      id: "<forged@example.com>",
      body: "Forged.",
      headers: {
        "Authentication-Results":
          "mx.cloudflare.net; dkim=none; spf=fail smtp.mailfrom=example.com; dmarc=fail header.from=example.com",
      },
    });
    const unauthenticated = await _deliver(worker, forged, "dave@example.com");
    assertEquals(unauthenticated.status, 400);
    _includes(await unauthenticated.text(), "DMARC failed");
    // A good mail after them is answered, and only it.
    const good = _mail({ from: "dave@example.com", id: "<good@example.com>", body: "Fine now." });
    assertEquals((await _deliver(worker, good, "dave@example.com")).status, 200);
    const mails = await _untilMails(worker, "dave@example.com", 1);
    assertEquals(mails.map((m) => m.inReplyTo), ["<good@example.com>"]);
    assert(!fake.requests.some((r) => /Broken|Forged/.test(r.lastUserText)));
  },
);

baton.done();

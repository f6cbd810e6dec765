// Workerd tests of email as a way in: Email Routing's handler endpoint in, the local send_email binding out (threads, dedup, robots, pairing, refusals, approvals by mail, jobs, busy notices and commands); Deno.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { MAIL_APPROVAL_HINT } from "../lib/email/mod.ts";
import { API_KEY, sessionState, settled, until } from "./_support/clients.ts";
import { askThenEcho, holdOn, toolRuns } from "./_support/fake_llm_scripts.ts";
import {
  deliverMail as _deliver,
  mailSessionKey as _sessionKey,
  mailsTo as _mailsTo,
  mailText as _mail,
  untilMails as _untilMails,
} from "./_support/mail_driver.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

// Listed senders write; anyone else is a stranger who gets a pairing code.
const baton = sharedBaton({
  email: true,
  vars: {
    ACCESS_POLICY: "pairing",
    ALLOWED_USERS: "email:alice@example.com,email:bob@example.com,email:carol@example.com," +
      "email:dave@example.com,email:frank@example.com,email:grace@example.com," +
      "email:heidi@example.com,email:ivan@example.com",
    EMAIL_FROM: "bot@baton.example",
    // session_info asks first (askThenEcho calls it; the default echo never does).
    APPROVAL_TOOLS: "session_info",
  },
});

/** Fails unless `text` contains `part`. */
function _includes(text: string, part: string): void {
  assert(text.includes(part), `expected ${JSON.stringify(part)} in ${JSON.stringify(text)}`);
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

baton.test(
  "email() an approval question is mailed; a reply whose first line is approve answers it",
  async (worker, fake) => {
    fake.script(askThenEcho);
    const first = "<ask.1@example.com>";
    const ask = _mail({ from: "grace@example.com", id: first, body: "Who am I?" });
    assertEquals((await _deliver(worker, ask, "grace@example.com")).status, 200);
    const [question] = await _untilMails(worker, "grace@example.com", 1);
    _includes(question.text ?? "", "Approval needed: session_info");
    _includes(question.text ?? "", MAIL_APPROVAL_HINT);
    assertEquals(question.inReplyTo, first);
    assertEquals(toolRuns(fake), 0);
    // The answer quotes the question below it: only its new first line is read.
    const answer = _mail({
      from: "grace@example.com",
      id: "<ask.2@example.com>",
      subject: "Re: Plans",
      inReplyTo: question.messageId,
      references: `${first} ${question.messageId}`,
      body: `Approve.\n\nOn Wed, 1 Jul 2026 at 10:01, Bot <bot@baton.example> wrote:\n> ${
        question.text?.split("\n")[0]
      }`,
    });
    assertEquals((await _deliver(worker, answer, "grace@example.com")).status, 200);
    const mails = await _untilMails(worker, "grace@example.com", 3);
    const texts = mails.map((m) => m.text ?? "");
    assert(texts.some((t) => t.includes("Approved: session_info runs now.")), texts.join("|"));
    assert(texts.some((t) => t.startsWith("done: ")), texts.join("|"));
    await settled(worker, await _sessionKey("grace@example.com", first));
    assertEquals(toolRuns(fake), 1);
    // The answer was a command, never a message the model saw.
    assert(!fake.requests.some((r) => /approve/i.test(r.lastUserText)));
  },
);

baton.test(
  "POST /v1/jobs in an email session: the scheduled turn mails its answer in the thread",
  async (worker) => {
    const first = "<job.1@example.com>";
    const raw = _mail({ from: "heidi@example.com", id: first, body: "Hello." });
    assertEquals((await _deliver(worker, raw, "heidi@example.com")).status, 200);
    const [reply] = await _untilMails(worker, "heidi@example.com", 1);
    const session = await _sessionKey("heidi@example.com", first);
    await settled(worker, session);
    const res = await worker.fetch("/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ session, prompt: "Water the plants.", schedule: { in: 1 } }),
    });
    assertEquals(res.status, 201, await res.text());
    const mails = await _untilMails(worker, "heidi@example.com", 2);
    const answer = mails.find((m) => (m.text ?? "").includes("Water the plants."))!;
    assert(answer, mails.map((m) => m.text).join("|"));
    assertEquals(answer.subject, "Re: Plans");
    assertEquals(answer.inReplyTo, first);
    assertMatch(answer.messageId ?? "", /^<baton\.[0-9a-f]{16}\./);
    assert(answer.messageId !== reply.messageId, "each mail its own Message-ID");
  },
);

baton.test(
  "email() busy: a mail while a turn runs is queued with a notice mail; /status by mail answers",
  async (worker, fake) => {
    fake.script(holdOn("Slow one."));
    const first = "<busy.1@example.com>";
    const slow = _mail({ from: "ivan@example.com", id: first, body: "Slow one." });
    assertEquals((await _deliver(worker, slow, "ivan@example.com")).status, 200);
    await until(() => fake.requests.some((r) => r.lastUserText === "Slow one."), "the held turn");
    const followUp = (id: string, body: string) =>
      _mail({
        from: "ivan@example.com",
        id,
        subject: "Re: Plans",
        inReplyTo: first,
        references: first,
        body,
      });
    const next = followUp("<busy.2@example.com>", "Next one.");
    assertEquals((await _deliver(worker, next, "ivan@example.com")).status, 200);
    const [queued] = await _untilMails(worker, "ivan@example.com", 1);
    assertEquals(queued.text?.trim(), "Queued — I'll answer after the current reply.");
    assertEquals(queued.inReplyTo, "<busy.2@example.com>");
    const status = followUp("<busy.3@example.com>", "/status");
    assertEquals((await _deliver(worker, status, "ivan@example.com")).status, 200);
    const mails = await _untilMails(worker, "ivan@example.com", 2);
    const answer = mails.find((m) => m.inReplyTo === "<busy.3@example.com>")!;
    assertMatch(answer.text ?? "", /^Working on a reply for \d+ s .*1 message waiting\./);
    fake.release();
    const all = await _untilMails(worker, "ivan@example.com", 4);
    const replies = all.map((m) => [m.inReplyTo, m.text?.trim()].join(" "));
    _includes(replies.join("|"), `${first} Slow one.`);
    _includes(replies.join("|"), "<busy.2@example.com> Next one.");
    await settled(worker, await _sessionKey("ivan@example.com", first));
    assert(!fake.requests.some((r) => r.lastUserText === "/status"));
  },
);

baton.done();

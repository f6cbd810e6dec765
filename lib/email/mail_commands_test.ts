// Unit tests of mailCommandText() and the approval hint of a question mail; Deno.
import { assert, assertEquals } from "@std/assert";
import PostalMime from "postal-mime";
import { emailAdapter, MAIL_APPROVAL_HINT, mailCommandText, type RawMail } from "./mod.ts";

Deno.test("mailCommandText() reads a reply's first line approve / deny as the command", () => {
  assertEquals(mailCommandText("Approve.\n\nThanks, Grace", true), "/approve");
  assertEquals(mailCommandText("approve  SESSION", true), "/approve session");
  assertEquals(mailCommandText("Approve always!", true), "/approve always");
  assertEquals(mailCommandText("DENY", true), "/deny");
});

Deno.test("mailCommandText() leaves other text, and a mail that answers no mail of baton's", () => {
  assertEquals(mailCommandText("Approve the budget, please.", true), "Approve the budget, please.");
  assertEquals(mailCommandText("Yes, go on", true), "Yes, go on");
  assertEquals(mailCommandText("Approve", false), "Approve");
});

Deno.test("emailAdapter() send mails a question's choices as the line saying what to reply", async () => {
  const sent: RawMail[] = [];
  const adapter = emailAdapter((_env, mail) => {
    sent.push(mail);
    return Promise.resolve();
  });
  const target = {
    platform: "email" as const,
    from: "bot@baton.example",
    to: "grace@example.com",
    subject: "Re: Plans",
    in_reply_to: "<q@example.com>",
    references: ["<q@example.com>"],
    thread: "0123456789abcdef",
    tag: "01234567",
  };
  const choices = [{ label: "Approve", data: "bt:a:1:x:o" }];
  await adapter.send(target, "Approval needed: x", { index: 0, count: 1, choices }, {});
  await adapter.send(target, "Plain answer", { index: 0, count: 1 }, {});
  const [question, plain] = await Promise.all(sent.map((m) => PostalMime.parse(m.raw)));
  assert(question.text?.includes(MAIL_APPROVAL_HINT), question.text);
  assertEquals(plain.text?.trim(), "Plain answer");
});

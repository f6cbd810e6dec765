// Workerd tests of email replies across a kill: send_email cut off mid-send is resent once with the same Message-ID behind the note, a recorded send never again; Deno + Miniflare.
import fsp from "node:fs/promises";
import PostalMime from "postal-mime";
import { assertEquals } from "@std/assert";
import { RESEND_NOTE } from "../lib/chat/mod.ts";
import { startFakeModel } from "../lib/testing/fake_model.ts";
import { settled, testVars } from "./_support/clients.ts";
import { deliverMail, mailSessionKey, mailText, untilMails } from "./_support/mail_driver.ts";
import { startWorker, tempPersistDir } from "./_support/worker.ts";

const _VARS = {
  EMAIL_FROM: "bot@baton.example",
  ALLOWED_USERS: "email:judy@example.com",
  ACCESS_POLICY: "allowlist",
  TURN_LEASE_MS: "300",
};

/**
 * Holds the first mail Miniflare's local send_email binding stores (it writes each one to a
 * `.eml` file through its Node loopback, in this process, before it answers): while held, the
 * binding's `send` is out and unanswered — the window a kill cuts. Returns the held mail's text
 * once it is out, and `restore` to put `writeFile` back and let the held write fail.
 */
function _holdFirstMail(): { out: Promise<string>; restore(): void } {
  const original = fsp.writeFile;
  const out = Promise.withResolvers<string>();
  const held = Promise.withResolvers<void>();
  let holding = true;
  // deno-lint-ignore no-explicit-any
  (fsp as any).writeFile = async (path: unknown, data: unknown, ...rest: unknown[]) => {
    if (holding && String(path).endsWith(".eml")) {
      holding = false;
      out.resolve(String(data));
      await held.promise;
      throw new Error("the runtime was killed while this mail was out");
    }
    // deno-lint-ignore no-explicit-any
    return await (original as any)(path, data, ...rest);
  };
  return {
    out: out.promise,
    restore: () => {
      fsp.writeFile = original;
      held.resolve();
    },
  };
}

Deno.test({
  name:
    "email() a kill while send_email is out: after the restart the reply is mailed once more, same Message-ID, behind the note",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fake = await startFakeModel();
    const dir = await tempPersistDir();
    const hold = _holdFirstMail();
    const vars = { ...testVars(fake), ..._VARS };
    const first = "<kill.1@example.com>";
    const key = await mailSessionKey("judy@example.com", first);
    try {
      const before = await startWorker({ vars, persistDir: dir.path, email: true });
      try {
        const raw = mailText({ from: "judy@example.com", id: first, body: "Reply exactly once." });
        assertEquals((await deliverMail(before, raw, "judy@example.com")).status, 200);
        const cutOff = await PostalMime.parse(await hold.out);
        assertEquals(cutOff.text?.trim(), "Reply exactly once.");
        // Killed while the mail is out: whether it left is unknown.
        await before.dispose();
        const after = await startWorker({ vars, persistDir: dir.path, email: true });
        try {
          const [resent] = await untilMails(after, "judy@example.com", 1);
          await settled(after, key);
          assertEquals(resent.messageId, cutOff.messageId, "the outbox row's Message-ID, kept");
          assertEquals(resent.text?.trim(), `${RESEND_NOTE}Reply exactly once.`.trim());
          assertEquals(resent.inReplyTo, first);
          // The stored reply was sent again, not written again.
          assertEquals(
            fake.requests.filter((r) => r.lastUserText === "Reply exactly once.").length,
            1,
          );
          assertEquals(after.mails().length, 1);
        } finally {
          await after.dispose();
        }
      } finally {
        await before.dispose();
      }
    } finally {
      hold.restore();
      await fake.close();
      await dir.cleanup();
    }
  },
});

Deno.test({
  name: "email() a kill after the reply was sent and recorded: the restart never mails it again",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fake = await startFakeModel();
    const dir = await tempPersistDir();
    const vars = { ...testVars(fake), ..._VARS };
    const first = "<sent.1@example.com>";
    const key = await mailSessionKey("judy@example.com", first);
    try {
      const before = await startWorker({ vars, persistDir: dir.path, email: true });
      try {
        const raw = mailText({ from: "judy@example.com", id: first, body: "Once is enough." });
        assertEquals((await deliverMail(before, raw, "judy@example.com")).status, 200);
        await untilMails(before, "judy@example.com", 1);
        await settled(before, key);
      } finally {
        await before.dispose();
      }
      const after = await startWorker({ vars, persistDir: dir.path, email: true });
      try {
        // A second mail in the thread, answered: the session woke and flushed its outbox first.
        const next = mailText({
          from: "judy@example.com",
          id: "<sent.2@example.com>",
          subject: "Re: Plans",
          inReplyTo: first,
          references: first,
          body: "And after the restart?",
        });
        assertEquals((await deliverMail(after, next, "judy@example.com")).status, 200);
        const mails = await untilMails(after, "judy@example.com", 1);
        await settled(after, key);
        assertEquals(mails.map((m) => m.inReplyTo), ["<sent.2@example.com>"]);
        assertEquals(after.mails().length, 1);
      } finally {
        await after.dispose();
      }
    } finally {
      await fake.close();
      await dir.cleanup();
    }
  },
});

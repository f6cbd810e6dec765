// Long conversations in workerd: compaction at a small CONTEXT_TOKENS (the model's own usage counted), a 400 context_length_exceeded compacted and retried, /compact in a chat; Deno + Miniflare.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { API_KEY, chat, chatReply, json, sendWebhook } from "./_support/clients.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

const baton = sharedBaton({ vars: { CONTEXT_TOKENS: "1000" } });

/** Whether the request is a compaction's summary call (its system prompt, lib/session/compactor.ts). */
const isSummary = (req: FakeModelRequest) =>
  String(req.body.messages?.[0]?.content ?? "").startsWith("You compact a conversation");

/** The summary text of a request's history, or "" when it carries none. */
const summaryIn = (req: FakeModelRequest) =>
  String(
    req.body.messages.find((m: { role: string; content: unknown }) =>
      m.role === "system" && String(m.content).startsWith("Summary of the earlier conversation")
    )?.content ?? "",
  );

/** Echoes, reporting 100 prompt tokens per message sent (as a provider counts a long prompt). */
const counting = (req: FakeModelRequest): FakeModelStep =>
  isSummary(req) ? { kind: "text", text: "SUMMARY: the user likes green tea" } : {
    kind: "text",
    text: `re: ${req.lastUserText}`,
    usage: { prompt_tokens: 100 * req.body.messages.length, completion_tokens: 5 },
  };

baton.test(
  "CONTEXT_TOKENS: past it a later turn's model call sees the summary of the oldest turns plus the newest, and GET /v1/sessions/{key} shows both",
  async (worker, fake) => {
    fake.script(counting);
    for (let n = 1; n <= 7; n++) {
      assertEquals(
        await chatReply(await chat(worker, `msg ${n}`, { session: "cmp" })),
        `re: msg ${n}`,
      );
    }
    const summaries = fake.requests.filter(isSummary);
    assertEquals(summaries.length, 1, "one compaction");
    assertMatch(summaries[0].body.messages[1].content, /user: msg 1\n/);
    const last = fake.requests.at(-1)!;
    assertMatch(summaryIn(last), /SUMMARY: the user likes green tea/);
    const users = last.body.messages.filter((m: { role: string }) => m.role === "user")
      .map((m: { content: string }) => m.content);
    assert(!users.includes("msg 1"), "the oldest turn is summarised, not sent");
    assertEquals(users.at(-1), "msg 7");
    assert(users.length >= 2, "the newest turns are sent as they are");
    const res = await worker.fetch(`/v1/sessions/${encodeURIComponent("api:cmp")}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const snapshot = await json(res);
    assertEquals(snapshot.messages.length, 14, "the transcript keeps every message");
    assertEquals(snapshot.compactions.length, 1);
    assertEquals(snapshot.compactions[0].from, 0);
    assertEquals(snapshot.compactions[0].summary, "SUMMARY: the user likes green tea");
  },
);

baton.test(
  "a 400 context_length_exceeded compacts the conversation and retries the turn once",
  async (worker, fake) => {
    fake.script((req) => {
      if (isSummary(req)) return { kind: "text", text: "SUMMARY: earlier talk" };
      if (req.lastUserText === "overflow" && !summaryIn(req)) {
        return {
          kind: "status",
          status: 400,
          body: {
            error: {
              message: "This model's maximum context length is 8192 tokens.",
              type: "invalid_request_error",
              code: "context_length_exceeded",
            },
          },
        };
      }
      return { kind: "text", text: `re: ${req.lastUserText}` };
    });
    await chatReply(await chat(worker, "first", { session: "ovf" }));
    await chatReply(await chat(worker, "second", { session: "ovf" }));
    assertEquals(
      await chatReply(await chat(worker, "overflow", { session: "ovf" })),
      "re: overflow",
    );
    assertEquals(fake.requests.filter(isSummary).length, 1);
    assertMatch(summaryIn(fake.requests.at(-1)!), /SUMMARY: earlier talk/);
  },
);

baton.test(
  "/compact in a chat compacts at once and answers how many messages it summarised",
  async (worker, fake) => {
    fake.script((req) =>
      isSummary(req)
        ? { kind: "text", text: "SUMMARY: chat so far" }
        : { kind: "text", text: `re: ${req.lastUserText}` }
    );
    const hook = async (text: string) =>
      (await json(await sendWebhook(worker, { session: "cmd-compact", text }))).reply;
    await hook("one");
    await hook("two");
    assertMatch(await hook("/compact"), /^Compacted 4 messages into a summary/);
    assertEquals(await hook("three"), "re: three");
    assertMatch(summaryIn(fake.requests.at(-1)!), /SUMMARY: chat so far/);
    assertMatch(await hook("/status"), /Context: about \d+ tokens of 1,000/);
  },
);

baton.done();

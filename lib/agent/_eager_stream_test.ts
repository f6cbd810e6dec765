// Unit tests for lib/agent/_eager_stream.ts: its stream class is defined once, on the first streamed call, and every call's stream is of it and carries its own reply; Deno (the fake model on loopback).
import { assert, assertStrictEquals } from "@std/assert";
import OpenAI from "openai";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { startFakeModel } from "../testing/fake_model.ts";
import { eagerChatStream, eagerStreamClass } from "./_eager_stream.ts";

Deno.test("eagerChatStream() streams every call through one class, defined once, each with its own reply", async () => {
  const fake = await startFakeModel();
  try {
    let n = 0;
    fake.script(() => ({ kind: "text", text: `reply ${++n}` }));
    const client = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
    const ask = (text: string) => ({
      model: "m",
      messages: [{ role: "user" as const, content: text }],
    });
    const first = await eagerChatStream(client, ask("one"));
    assertStrictEquals(await first.finalContent(), "reply 1");
    const second = await eagerChatStream(client, ask("two"));
    assertStrictEquals(await second.finalContent(), "reply 2");
    // A class made per call would give each stream a constructor of its own.
    assertStrictEquals(first.constructor, second.constructor);
    assertStrictEquals(first.constructor, await eagerStreamClass());
    assert(first instanceof ChatCompletionStream, "the package's stream helper, as before");
    assertStrictEquals(fake.requests.length, 2);
  } finally {
    await fake.close();
  }
});

// Unit tests for lib/openai/responses_api.ts and lib/openai/responses_stream.ts; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { responseRequest, responseTurn } from "./responses_api.ts";
import {
  functionCallItems,
  outputMessageId,
  parseResponseId,
  responseId,
} from "./response_object.ts";
import { responseStreamFrames } from "./responses_stream.ts";

/** A data frame, as the stream mapper makes them. */
type _Frame = { event: string; data: Record<string, unknown> };

Deno.test("responseId() round-trips through parseResponseId(); anything else is null", () => {
  for (const session of ["r0123abcd", "a:b.c-d_e", "x".repeat(128)]) {
    assertEquals(parseResponseId(responseId("acme", session, 7)), {
      tenant: "acme",
      session,
      seq: 7,
    });
  }
  for (
    const id of ["resp_", "resp__1", "resp_ZnpfMQ_0", "resp_ZnpfMQ_01", "run_ZnpfMQ_1", "resp_%_1"]
  ) {
    assertStrictEquals(parseResponseId(id), null, id);
  }
  assertStrictEquals(parseResponseId(`resp_${btoa("a.b/s1")}_1`), null, "not a tenant's name");
  assertStrictEquals(parseResponseId(`resp_${btoa("acme/a/b")}_1`), null, "not a session id");
});

Deno.test("responseId() names the tenant: one session id in two tenants gives two ids, and two items' ids", () => {
  const acme = responseId("acme", "r1", 1);
  const beta = responseId("beta", "r1", 1);
  assert(acme !== beta, acme);
  assert(outputMessageId(acme) !== outputMessageId(beta), outputMessageId(acme));
  const call = {
    id: "call_1",
    type: "function" as const,
    function: { name: "f", arguments: "{}" },
  };
  const [fa, fb] = [acme, beta].map((id) => functionCallItems(id, [call], "completed")[0].id);
  assert(fa !== fb, fa);
  assertEquals(parseResponseId(beta), { tenant: "beta", session: "r1", seq: 1 });
  assertEquals(parseResponseId(responseId("t".repeat(32), "s".repeat(128), 9)), {
    tenant: "t".repeat(32),
    session: "s".repeat(128),
    seq: 9,
  });
  // An id from before tenants were named in it (`resp_<base64url session id>_<seq>`): the caller's.
  assertEquals(parseResponseId("resp_cjE_1"), { tenant: null, session: "r1", seq: 1 });
});

Deno.test("responseTurn() takes the last user message as input, system text and earlier messages apart", () => {
  const request = responseRequest.parse({
    instructions: "be terse",
    input: [
      { role: "system", content: "sys" },
      { role: "user", content: "u1" },
      { role: "assistant", content: [{ type: "output_text", text: "a1" }] },
      {
        role: "user",
        content: [{ type: "input_text", text: "u" }, { type: "input_text", text: "2" }],
      },
    ],
    max_output_tokens: 9,
    temperature: 0,
  });
  const turn = responseTurn(request, "m", 5_000);
  assert(typeof turn !== "string");
  assertStrictEquals(turn.input, "u2");
  assertStrictEquals(turn.system, "be terse\nsys");
  assertEquals(turn.earlier, [{ role: "user", content: "u1" }, {
    role: "assistant",
    content: "a1",
  }]);
  assertEquals(turn.params, { max_completion_tokens: 9, temperature: 0 });
  assertStrictEquals(turn.meta.created_at, 5);
  assertStrictEquals(turn.meta.store, true);
  const last = responseRequest.parse({ input: [{ role: "assistant", content: "x" }] });
  assertStrictEquals(typeof responseTurn(last, "m", 0), "string");
  assert(
    !responseRequest.safeParse({ input: [{ type: "function_call", role: "user", content: "x" }] })
      .success,
  );
});

Deno.test("responseStreamFrames() numbers every event and completes a run whose early events it missed", () => {
  const request = responseRequest.parse({ input: "hi" });
  const turn = responseTurn(request, "m", 0);
  assert(typeof turn !== "string");
  const frames = responseStreamFrames("resp_eA_1", turn.meta);
  const out = [
    ...frames({ type: "message.delta", data: { delta: "h" } }),
    ...frames({ type: "message.delta", data: { delta: "i" } }),
    ...frames({
      type: "run.completed",
      data: { output: "hi", usage: { prompt_tokens: 1, completion_tokens: 2 } },
    }),
  ] as _Frame[];
  assertEquals(out.map((f) => f.event), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assertEquals(
    out.map((f) => (f.data as { sequence_number: number }).sequence_number),
    out.map((_, i) => i),
  );
  const done = (out.at(-1)!.data as { response: { usage: { total_tokens: number } } }).response;
  assertStrictEquals(done.usage.total_tokens, 3);
  const cancel = responseStreamFrames("resp_eA_2", turn.meta);
  const failed = cancel({ type: "run.cancelled", data: {} }) as _Frame[];
  assertEquals(failed.map((f) => f.event), ["response.created", "response.failed"]);
});

// Unit tests for functions/console/sse_reader.ts: events split across chunks, comments, CRLF; Deno.
import { assertEquals } from "@std/assert";
import { readSse } from "./sse_reader.ts";

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

Deno.test("readSse() joins events split across chunks and skips keep-alive comments", async () => {
  const got = [];
  for await (
    const message of readSse(body([
      ": stream open\n\nevent: message.de",
      'lta\ndata: {"delta":"a"}\n\n: keep-alive\n\n',
      'event: run.completed\r\ndata: {"output":"a"}\r\n\r\ndata: tail',
    ]))
  ) got.push(message);
  assertEquals(got, [
    { event: "message.delta", data: '{"delta":"a"}' },
    { event: "run.completed", data: '{"output":"a"}' },
  ]);
});

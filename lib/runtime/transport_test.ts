// Unit tests for lib/runtime/transport.ts: StreamTransport, the SSE and NDJSON encoders and readNdjson; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import {
  encodeSse,
  ndjsonTransport,
  readNdjson,
  type SseEvent,
  sseTransport,
  StreamTransport,
} from "./transport.ts";
import { assertThrowsTypeError, readAll } from "./_transport_test_support.ts";

const decoder = new TextDecoder();

function cyclic(): unknown {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

// Events that are programming errors for both encoders.
const BAD_DATA: [string, unknown][] = [
  ["BigInt", { n: 1n }],
  ["cyclic object", cyclic()],
  ["undefined", undefined],
];

const BAD_SSE: [string, SseEvent][] = [
  ...BAD_DATA.map(([name, data]): [string, SseEvent] => [`${name} data`, { data }]),
  ["event name with a newline", { event: "a\nb", data: 1 }],
  ["event name with a trailing newline", { event: "a\n", data: 1 }],
  ["event name with a space", { event: "a b", data: 1 }],
  ["empty event name", { event: "", data: 1 }],
  ["comment with a newline", { comment: "a\nb" }],
  ["comment with a carriage return", { comment: "a\rb" }],
];

// --- StreamTransport / sseTransport -------------------------------------------------------

Deno.test("StreamTransport delivers each frame exactly once, in order, and write returns true", async () => {
  const t = new StreamTransport<number>((n) => `<${n}>`);
  const reader = t.readable.getReader();
  for (let i = 0; i < 5; i++) assertStrictEquals(t.write(i), true);
  t.close();
  const frames: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    frames.push(decoder.decode(value));
  }
  assertEquals(frames, ["<0>", "<1>", "<2>", "<3>", "<4>"]);
});

Deno.test("StreamTransport delivers frames interleaved with reads", async () => {
  const t = new StreamTransport<string>((s) => s);
  const reader = t.readable.getReader();
  for (const s of ["a", "b", "c"]) {
    assertStrictEquals(t.write(s), true);
    const { done, value } = await reader.read();
    assertEquals(done, false);
    assertEquals(decoder.decode(value), s);
  }
  t.close();
  assertEquals((await reader.read()).done, true);
});

Deno.test("StreamTransport.waitingSince() names a frame its reader has not taken, and clears once it is read", async () => {
  const t = new StreamTransport<string>((s) => s);
  const reader = t.readable.getReader();
  await Promise.resolve(); // the stream's start and first pull
  assertStrictEquals(t.waitingSince(), null);
  const before = Date.now();
  t.write("a");
  t.write("b");
  const since = t.waitingSince();
  assert(since !== null && since >= before, String(since));
  assertEquals(decoder.decode((await reader.read()).value), "a");
  assertStrictEquals(t.waitingSince(), since, "one frame still waits");
  assertEquals(decoder.decode((await reader.read()).value), "b");
  await Promise.resolve(); // the pull after the drain
  assertStrictEquals(t.waitingSince(), null);
});

Deno.test("StreamTransport.write() returns false once the reader cancelled", async () => {
  const t = new StreamTransport<string>((s) => s);
  const reader = t.readable.getReader();
  assertStrictEquals(t.write("x"), true);
  assertStrictEquals(t.open, true);
  await reader.cancel();
  assertStrictEquals(t.open, false);
  assertStrictEquals(t.write("y"), false);
  assertStrictEquals(t.write("z"), false);
  t.close(); // still safe
  t.close();
});

Deno.test("StreamTransport.write() returns false right after a not-awaited reader.cancel()", () => {
  const t = new StreamTransport<string>((s) => s);
  const reader = t.readable.getReader();
  void reader.cancel();
  assertStrictEquals(t.write("y"), false);
});

Deno.test("StreamTransport.write() returns false after close(); close twice is safe", async () => {
  const t = new StreamTransport<string>((s) => s);
  assertStrictEquals(t.write("a"), true);
  t.close();
  assertStrictEquals(t.open, false);
  assertStrictEquals(t.write("b"), false);
  t.close();
  assertStrictEquals(t.write("c"), false);
  // The frame written before close is still delivered, nothing after it.
  assertEquals(await readAll(t.readable), ["a"]);
});

Deno.test("StreamTransport.write() throws an encoder error even when the peer is gone", async () => {
  const t = new StreamTransport<string>(() => {
    throw new RangeError("boom");
  });
  const e1 = assertThrows(() => t.write("a"));
  assert(e1 instanceof RangeError);
  await t.readable.cancel();
  const e2 = assertThrows(() => t.write("a"));
  assert(e2 instanceof RangeError);
  t.close();
  const e3 = assertThrows(() => t.write("a"));
  assert(e3 instanceof RangeError);
});

Deno.test("sseTransport delivers encoded frames exactly once, in order", async () => {
  const t = sseTransport();
  const events: SseEvent[] = [
    { data: { a: 1 } },
    { event: "delta", data: "hi" },
    { comment: "keep-alive" },
    { data: "[DONE]" },
  ];
  for (const e of events) assertStrictEquals(t.write(e), true);
  t.close();
  assertEquals((await readAll(t.readable)).join(""), events.map(encodeSse).join(""));
  assertEquals(
    events.map(encodeSse).join(""),
    'data: {"a":1}\n\nevent: delta\ndata: hi\n\n: keep-alive\n\ndata: [DONE]\n\n',
  );
});

Deno.test("sseTransport.write() returns false once the reader cancelled and after close()", async () => {
  const t = sseTransport();
  const reader = t.readable.getReader();
  assertStrictEquals(t.write({ data: 1 }), true);
  await reader.cancel();
  assertStrictEquals(t.write({ data: 2 }), false);
  t.close();
  t.close();
  assertStrictEquals(t.write({ data: 3 }), false);
});

for (const [name, event] of BAD_SSE) {
  Deno.test(`sseTransport.write() throws on ${name}: while connected, after cancel, after close`, async () => {
    const t = sseTransport();
    const reader = t.readable.getReader();
    assertThrowsTypeError(() => t.write(event), `${name} (connected)`);
    // The throw did not break the transport.
    assertStrictEquals(t.write({ data: "ok" }), true);
    assertEquals(decoder.decode((await reader.read()).value), "data: ok\n\n");
    await reader.cancel();
    assertThrowsTypeError(() => t.write(event), `${name} (cancelled)`);
    t.close();
    assertThrowsTypeError(() => t.write(event), `${name} (closed)`);
  });
}

for (const [name, data] of BAD_DATA) {
  Deno.test(`ndjsonTransport.write() throws on ${name}: while connected, after cancel, after close`, async () => {
    const t = ndjsonTransport<unknown>();
    const reader = t.readable.getReader();
    assertThrowsTypeError(() => t.write(data), `${name} (connected)`);
    await reader.cancel();
    assertThrowsTypeError(() => t.write(data), `${name} (cancelled)`);
    t.close();
    assertThrowsTypeError(() => t.write(data), `${name} (closed)`);
  });
}

// --- encodeSse ----------------------------------------------------------------------------

Deno.test("encodeSse writes an event: line only when named", () => {
  assertEquals(
    encodeSse({ event: "message.delta", data: { x: 1 } }),
    'event: message.delta\ndata: {"x":1}\n\n',
  );
  assertEquals(encodeSse({ event: "A-z_0.9", data: 1 }), "event: A-z_0.9\ndata: 1\n\n");
  assertEquals(encodeSse({ data: { x: 1 } }), 'data: {"x":1}\n\n');
  assertEquals(encodeSse({ event: undefined, data: null }), "data: null\n\n");
});

Deno.test("encodeSse sends raw string data as is and other data as JSON", () => {
  assertEquals(encodeSse({ data: "[DONE]" }), "data: [DONE]\n\n");
  assertEquals(encodeSse({ data: 'say "hi"' }), 'data: say "hi"\n\n');
  assertEquals(encodeSse({ data: "" }), "data: \n\n");
  assertEquals(encodeSse({ data: 0 }), "data: 0\n\n");
  assertEquals(encodeSse({ data: false }), "data: false\n\n");
  assertEquals(encodeSse({ data: ["a", { b: "c\nd" }] }), 'data: ["a",{"b":"c\\nd"}]\n\n');
});

Deno.test("encodeSse escapes U+2028 and U+2029 in data", () => {
  const frame = encodeSse({ data: { s: "a\u2028b\u2029c" } });
  assertEquals(frame, 'data: {"s":"a\\u2028b\\u2029c"}\n\n');
  assert(!/[\u2028\u2029]/.test(frame));
  assertEquals(JSON.parse(frame.slice("data: ".length, -2)), { s: "a\u2028b\u2029c" });
  const raw = encodeSse({ data: "x\u2028y\u2029z" });
  assertEquals(raw, "data: x\\u2028y\\u2029z\n\n");
});

Deno.test("encodeSse encodes comment frames", () => {
  assertEquals(encodeSse({ comment: "keep-alive" }), ": keep-alive\n\n");
  assertEquals(encodeSse({ comment: "" }), ": \n\n");
});

Deno.test("encodeSse throws a TypeError on unserialisable data and bad names or comments", () => {
  for (const [name, event] of BAD_SSE) assertThrowsTypeError(() => encodeSse(event), name);
});

// --- ndjsonTransport + readNdjson ----------------------------------------------------------

Deno.test("ndjsonTransport + readNdjson round-trips events, strings included", async () => {
  const events: unknown[] = [
    { type: "delta", text: "héllo 👋\nworld" },
    "a plain string",
    '{"looks":"like json"}',
    "",
    42,
    null,
    [1, "two", { three: 3 }],
    { s: "\u2028\u2029" },
  ];
  const t = ndjsonTransport<unknown>();
  const got = (async () => {
    const out: unknown[] = [];
    for await (const e of readNdjson<unknown>(t.readable)) out.push(e);
    return out;
  })();
  for (const e of events) assertStrictEquals(t.write(e), true);
  t.close();
  assertEquals(await got, events);
});

Deno.test("ndjsonTransport quotes strings as JSON on the wire", async () => {
  const t = ndjsonTransport<unknown>();
  t.write("[DONE]");
  t.write({ a: 1 });
  t.close();
  assertEquals((await readAll(t.readable)).join(""), '"[DONE]"\n{"a":1}\n');
});

/** A stream that emits `bytes` cut at the given offsets. */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const bounds = [0, ...cuts, bytes.length];
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i + 1 < bounds.length; i++) {
        controller.enqueue(bytes.slice(bounds[i], bounds[i + 1]));
      }
      controller.close();
    },
  });
}

Deno.test("readNdjson reassembles lines split across chunks, inside a multi-byte UTF-8 character", async () => {
  const events = [{ text: "€uro" }, "😀 smile", { n: 2 }];
  const text = events.map((e) => JSON.stringify(e) + "\n").join("");
  const bytes = new TextEncoder().encode(text);
  // "€" is 3 bytes (E2 82 AC), "😀" is 4 bytes (F0 9F 98 80): cut inside both.
  const euro = bytes.indexOf(0xe2);
  const smile = bytes.indexOf(0xf0);
  assert(euro > 0 && smile > euro);
  const cuts = [euro + 1, euro + 2, smile + 1, smile + 3, bytes.length - 1];
  const out: unknown[] = [];
  for await (const e of readNdjson<unknown>(chunked(bytes, cuts))) out.push(e);
  assertEquals(out, events);
});

Deno.test("readNdjson handles one byte per chunk and several lines per chunk", async () => {
  const events = [{ a: "ünï" }, "x", [1, 2]];
  const bytes = new TextEncoder().encode(events.map((e) => JSON.stringify(e) + "\n").join(""));
  const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
  const out1: unknown[] = [];
  for await (const e of readNdjson<unknown>(chunked(bytes, everyByte))) out1.push(e);
  assertEquals(out1, events);
  const out2: unknown[] = [];
  for await (const e of readNdjson<unknown>(chunked(bytes, []))) out2.push(e);
  assertEquals(out2, events);
});

Deno.test("readNdjson skips blank lines", async () => {
  const bytes = new TextEncoder().encode('\n{"a":1}\n\n2\n');
  const out: unknown[] = [];
  for await (const e of readNdjson<unknown>(chunked(bytes, [3]))) out.push(e);
  assertEquals(out, [{ a: 1 }, 2]);
});

Deno.test("encodeSse() refuses raw string data that would split into more frames", () => {
  for (const data of ["x\n\nevent: evil\ndata: injected", "a\rb"]) {
    let thrown: unknown;
    try {
      encodeSse({ data });
    } catch (e) {
      thrown = e;
    }
    assert(thrown instanceof TypeError, JSON.stringify(data));
  }
});

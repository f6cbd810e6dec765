// Unit tests for lib/runtime/transport.ts: TransportTee's fan-out to a primary and its secondaries; Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { type SseEvent, sseTransport, type Transport, TransportTee } from "./transport.ts";
import { assertThrowsTypeError, readAll } from "./_transport_test_support.ts";

class FakeTransport implements Transport<string> {
  written: string[] = [];
  closes = 0;
  constructor(
    public result: boolean | (() => boolean) = true,
    public closeThrows = false,
  ) {}
  write(event: string): boolean {
    this.written.push(event);
    return typeof this.result === "function" ? this.result() : this.result;
  }
  close(): void {
    this.closes++;
    if (this.closeThrows) throw new Error("close failed");
  }
}

const throwing = () => {
  throw new Error("write failed");
};

Deno.test("TransportTee.write() returns the primary's result", () => {
  const primary = new FakeTransport(true);
  const tee = new TransportTee(primary);
  const s = new FakeTransport(true);
  tee.add(s);
  assertStrictEquals(tee.write("a"), true);
  primary.result = false;
  assertStrictEquals(tee.write("b"), false);
  assertEquals(primary.written, ["a", "b"]);
  assertEquals(s.written, ["a", "b"]);
  assertEquals(tee.secondaries, 1);
});

Deno.test("TransportTee.write() without secondaries passes the primary's result through", () => {
  const primary = new FakeTransport(false);
  const tee = new TransportTee(primary);
  assertEquals(tee.secondaries, 0);
  assertStrictEquals(tee.write("a"), false);
  primary.result = true;
  assertStrictEquals(tee.write("b"), true);
  assertEquals(primary.written, ["a", "b"]);
});

Deno.test("TransportTee.write() stays true when secondaries fail", () => {
  const tee = new TransportTee(new FakeTransport(true));
  tee.add(new FakeTransport(false));
  tee.add(new FakeTransport(throwing));
  assertStrictEquals(tee.write("a"), true);
  assertEquals(tee.secondaries, 0);
  assertStrictEquals(tee.write("b"), true);
});

Deno.test("TransportTee.write() throws when the primary throws", () => {
  const primary = new FakeTransport(throwing);
  const tee = new TransportTee(primary);
  tee.add(new FakeTransport(true));
  const e = assertThrows(() => tee.write("a"));
  assert(e instanceof Error && e.message === "write failed");
});

Deno.test("TransportTee.write() rethrows a real transport's programming error", () => {
  const tee = new TransportTee<SseEvent>(sseTransport());
  tee.add(sseTransport());
  assertThrowsTypeError(() => tee.write({ data: 1n }), "BigInt through tee");
});

Deno.test("TransportTee drops a secondary that returns false; the others keep every event", () => {
  const primary = new FakeTransport(true);
  const tee = new TransportTee(primary);
  const a = new FakeTransport(true);
  const gone = new FakeTransport(true);
  const b = new FakeTransport(true);
  tee.add(a);
  tee.add(gone);
  tee.add(b);
  assertEquals(tee.secondaries, 3);
  assertStrictEquals(tee.write("1"), true);
  gone.result = false;
  assertStrictEquals(tee.write("2"), true);
  assertEquals(tee.secondaries, 2);
  assertEquals(gone.closes, 1);
  assertStrictEquals(tee.write("3"), true);
  assertStrictEquals(tee.write("4"), true);
  assertEquals(gone.written, ["1", "2"]);
  assertEquals(gone.closes, 1);
  assertEquals(a.written, ["1", "2", "3", "4"]);
  assertEquals(b.written, ["1", "2", "3", "4"]);
  assertEquals(primary.written, ["1", "2", "3", "4"]);
  assertEquals(a.closes + b.closes + primary.closes, 0);
});

Deno.test("TransportTee drops a secondary that throws, even if its close throws too", () => {
  const primary = new FakeTransport(true);
  const tee = new TransportTee(primary);
  const bad = new FakeTransport(throwing, true);
  const good = new FakeTransport(true);
  tee.add(bad);
  tee.add(good);
  assertStrictEquals(tee.write("1"), true);
  assertEquals(tee.secondaries, 1);
  assertEquals(bad.closes, 1);
  assertStrictEquals(tee.write("2"), true);
  assertEquals(bad.written, ["1"]);
  assertEquals(good.written, ["1", "2"]);
  assertEquals(primary.written, ["1", "2"]);
});

Deno.test("TransportTee drops a secondary whose real peer cancelled", async () => {
  const primary = sseTransport();
  const tee = new TransportTee<SseEvent>(primary);
  const live = sseTransport();
  const gone = sseTransport();
  tee.add(live);
  tee.add(gone);
  await gone.readable.cancel();
  assertStrictEquals(tee.write({ data: 1 }), true);
  assertEquals(tee.secondaries, 1);
  assertStrictEquals(tee.write({ data: 2 }), true);
  tee.close();
  assertEquals((await readAll(live.readable)).join(""), "data: 1\n\ndata: 2\n\n");
  assertEquals((await readAll(primary.readable)).join(""), "data: 1\n\ndata: 2\n\n");
});

Deno.test("TransportTee.close() closes the primary and every secondary, surviving a throwing close", () => {
  const primary = new FakeTransport(true);
  const tee = new TransportTee(primary);
  const a = new FakeTransport(true);
  const bad = new FakeTransport(true, true);
  const b = new FakeTransport(true);
  tee.add(a);
  tee.add(bad);
  tee.add(b);
  tee.close();
  assertEquals(primary.closes, 1);
  assertEquals([a.closes, bad.closes, b.closes], [1, 1, 1]);
  assertEquals(tee.secondaries, 0);
  // Dropped secondaries are not written again.
  tee.write("after");
  assertEquals(a.written, []);
  assertEquals(b.written, []);
});

Deno.test("TransportTee.close() still closes the secondaries when the primary's close throws", () => {
  const primary = new FakeTransport(true, true);
  const tee = new TransportTee(primary);
  const a = new FakeTransport(true);
  tee.add(a);
  assertThrows(() => tee.close());
  assertEquals(a.closes, 1);
  assertEquals(tee.secondaries, 0);
});

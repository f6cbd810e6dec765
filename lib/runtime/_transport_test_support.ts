// Test support: helpers shared by the unit tests of lib/runtime/transport.ts; Deno (tests only).
import { assert, assertThrows } from "../../test/_support/assert.ts";

const decoder = new TextDecoder();

/** Reads every chunk until the stream ends, decoded to text, one entry per chunk. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const frames: string[] = [];
  for await (const chunk of stream) frames.push(decoder.decode(chunk));
  return frames;
}

/** Asserts `fn` throws a TypeError (so it neither returns false nor anything else). */
export function assertThrowsTypeError(fn: () => unknown, what: string): void {
  const e = assertThrows(fn, `${what}: expected a throw`);
  assert(e instanceof TypeError, `${what}: expected a TypeError, got ${e}`);
}

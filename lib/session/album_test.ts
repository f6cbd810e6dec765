// Unit tests of albums as one turn (album.ts) and of merged messages ending with their turn (inbox.ts finishJoined); Deno over node:sqlite.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { msg, options, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { type InboundMessage, SessionSentinel } from "./mod.ts";
import type { PlatformMedia } from "../media/mod.ts";

/** Piece `n` of album `album`: a photo, the first with a caption. */
function piece(album: string, n: number, caption = ""): InboundMessage {
  const photo: PlatformMedia = { platform: "telegram", file: `f${n}`, kind: "photo" };
  return { ...msg(caption, `tg:${album}:${n}`), album, platformMedia: [photo] };
}

Deno.test("SessionSentinel runs an album's pieces as one turn, its first piece gaining the others' media; a redelivered piece adds nothing", async () => {
  const { execute, state } = recordingExecutor();
  const seen: InboundMessage[] = [];
  const sentinel: SessionSentinel = new SessionSentinel(sqliteStorage(), (message, ...rest) => {
    seen.push(message);
    return execute(message, ...rest);
  }, { ...options, startDrain: () => void sentinel.drain() });
  const first = sentinel.submit(piece("a1", 1, "our trip"));
  const second = sentinel.submit(piece("a1", 2));
  assertStrictEquals(sentinel.submit(piece("a1", 2)).duplicate, true);
  sentinel.submit(piece("a1", 3));
  const outcome = await sentinel.outcome(first.seq);
  assertStrictEquals(outcome.status, "completed");
  assertEquals(state.order, ["our trip"]);
  assertEquals(seen[0].platformMedia?.map((m) => m.file), ["f1", "f2", "f3"]);
  assertEquals(await sentinel.outcome(second.seq), outcome);
  // The merged pieces ended with the turn: nothing waits.
  assertEquals(sentinel.snapshot().queued, 0);
  // Another album, or a plain text, is a turn of its own.
  const next = sentinel.submit(msg("and this?"));
  await sentinel.outcome(next.seq);
  assertEquals(state.order, ["our trip", "and this?"]);
});

Deno.test("SessionSentinel ends messages merged by BUSY_MODE=merge with their turn: they no longer count as queued", async () => {
  const { execute, hold, state } = recordingExecutor();
  const sentinel: SessionSentinel = new SessionSentinel(sqliteStorage(), execute, {
    ...options,
    busyMode: "merge",
    startDrain: () => void sentinel.drain(),
  });
  const held = hold("one");
  const one = sentinel.submit(msg("one"));
  while (state.running === 0) await new Promise((r) => setTimeout(r, 1));
  const two = sentinel.submit(msg("two"));
  sentinel.submit(msg("three"));
  assertStrictEquals(sentinel.snapshot().queued, 2);
  held.resolve();
  await sentinel.outcome(one.seq);
  await sentinel.outcome(two.seq);
  await new Promise((r) => setTimeout(r, 20));
  assertStrictEquals(sentinel.snapshot().queued, 0);
});

// Unit tests of a chat turn's live presence (lib/session/live_reply.ts): throttled previews, typing, close; Deno.
import { assert, assertEquals } from "@std/assert";
import type { PreviewResult, ReplyChannel } from "../chat/mod.ts";
import { LiveReply, PREVIEW_STOPPED } from "./live_reply.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function channel(answer: PreviewResult = "shown") {
  const log: string[] = [];
  const ch: ReplyChannel = {
    split: (_t, text) => [text.slice(0, 50), ...(text.length > 50 ? [text.slice(50)] : [])],
    send: () => Promise.resolve({ ok: true }),
    inDoubt: () => Promise.resolve("resend"),
    typing: () => (log.push("typing"), Promise.resolve(true)),
    preview: (_t, text) => (log.push(`preview ${text}`), Promise.resolve(answer)),
    endPreview: (_t, text) => (log.push(`end ${text}`), Promise.resolve()),
  };
  return { ch, log };
}

const target = { platform: "test" };

Deno.test("LiveReply.delta() previews the growing text at most once per interval, the latest text each time", async () => {
  const { ch, log } = channel();
  const live = new LiveReply(ch, target, 7, { previews: true, previewEveryMs: 100, now: Date.now });
  for (const piece of "abcdefghijklmnopqrst") {
    live.delta(piece);
    await sleep(20);
  }
  await sleep(150);
  await live.close("replied");
  const previews = log.filter((l) => l.startsWith("preview"));
  assert(previews.length >= 3 && previews.length <= 6, JSON.stringify(previews));
  assertEquals(previews.at(-1), "preview abcdefghijklmnopqrst");
});

Deno.test("LiveReply previews only the first part; a 429 ends previews; close('stopped') replaces a shown preview", async () => {
  const first = channel();
  const live = new LiveReply(first.ch, target, 1, {
    previews: true,
    previewEveryMs: 10,
    now: Date.now,
  });
  live.delta("x".repeat(49));
  await sleep(30);
  live.delta("y".repeat(30));
  await sleep(30);
  live.delta("z");
  await sleep(30);
  await live.close("stopped");
  assertEquals(first.log.filter((l) => l.startsWith("preview")).map((l) => l.length), [57, 58]);
  assertEquals(first.log.at(-1), `end ${PREVIEW_STOPPED}`);

  const limited = channel("rate_limited");
  const slowed = new LiveReply(limited.ch, target, 1, {
    previews: true,
    previewEveryMs: 10,
    now: Date.now,
  });
  for (let i = 0; i < 5; i++) {
    slowed.delta(`p${i}`);
    await sleep(20);
  }
  await slowed.close("stopped");
  assertEquals(limited.log.filter((l) => l.startsWith("preview")).length, 1);
  assert(!limited.log.some((l) => l.startsWith("end")), "nothing was shown, nothing to replace");
});

Deno.test("LiveReply.start() shows nothing for a turn that ends within its quiet time", async () => {
  const { ch, log } = channel();
  const live = new LiveReply(ch, target, 3, { previews: true, quietMs: 200, now: Date.now });
  live.start();
  live.delta("quick answer");
  await sleep(50);
  await live.close("replied");
  await sleep(250);
  assertEquals(log, []);

  const slow = channel();
  const late = new LiveReply(slow.ch, target, 4, {
    previews: true,
    quietMs: 50,
    previewEveryMs: 50,
    now: Date.now,
  });
  late.start();
  late.delta("slow answer");
  await sleep(120);
  await late.close("replied");
  assertEquals(slow.log.toSorted(), ["preview slow answer", "typing"]);
});

/** A channel whose previews are messages of their own (Slack): the first update names one. */
function messageChannel() {
  const log: string[] = [];
  const ch: ReplyChannel = {
    split: (_t, text) => [text],
    send: () => Promise.resolve({ ok: true }),
    inDoubt: () => Promise.resolve("resend"),
    preview: (_t, text, _d, handle) => {
      log.push(`preview ${handle ?? "-"} ${text}`);
      return Promise.resolve(handle ? "shown" : { handle: "m1" });
    },
    endPreview: (_t, text, handle) => (log.push(`end ${handle} ${text}`), Promise.resolve()),
  };
  return { ch, log };
}

Deno.test("LiveReply keeps a preview message's handle: stored once, passed to every later update, ended on a stop", async () => {
  const { ch, log } = messageChannel();
  const stored: (string | null)[] = [];
  const live = new LiveReply(ch, target, 1, {
    previews: true,
    previewEveryMs: 10,
    onHandle: (handle) => stored.push(handle),
    now: Date.now,
  });
  for (const piece of ["one ", "two ", "three"]) {
    live.delta(piece);
    await sleep(30);
  }
  assertEquals(live.handle, "m1");
  await live.close("stopped");
  assertEquals(stored, ["m1"]);
  assertEquals(log, [
    "preview - one ",
    "preview m1 one two ",
    "preview m1 one two three",
    `end m1 ${PREVIEW_STOPPED}`,
  ]);
});

Deno.test("LiveReply carries on an earlier attempt's preview message, and a pause removes it", async () => {
  const { ch, log } = messageChannel();
  const stored: (string | null)[] = [];
  const live = new LiveReply(ch, target, 1, {
    previews: true,
    previewEveryMs: 10,
    handle: "m0",
    onHandle: (handle) => stored.push(handle),
    now: Date.now,
  });
  live.delta("again");
  await sleep(30);
  await live.close("paused");
  // No second message: the earlier one is edited, then removed so the reply follows the question.
  assertEquals(log, ["preview m0 again", "end m0 null"]);
  assertEquals(stored, [null]);
  assertEquals(live.handle, undefined);

  // An attempt that showed nothing itself still ends the message an earlier one left.
  const quiet = messageChannel();
  const stopped = new LiveReply(quiet.ch, target, 1, {
    previews: true,
    handle: "m0",
    now: Date.now,
  });
  await stopped.close("stopped");
  assertEquals(quiet.log, [`end m0 ${PREVIEW_STOPPED}`]);
});

Deno.test("LiveReply.start() renews typing at the platform's own interval where it sets one", async () => {
  const { ch, log } = channel();
  ch.typingEveryMs = () => 20;
  const live = new LiveReply(ch, target, 1, {
    previews: false,
    quietMs: 1,
    typingEveryMs: 10_000,
    now: Date.now,
  });
  live.start();
  await sleep(150);
  await live.close("replied");
  const typed = log.filter((l) => l === "typing").length;
  assert(typed >= 3, `${typed} typing calls`);
});

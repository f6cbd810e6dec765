// Unit and property tests for lib/chat/split_message.ts; Deno.
import { assert, assertEquals, assertThrows } from "@std/assert";
import { splitMessage } from "./split_message.ts";

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function assertParts(parts: string[], limit: number): void {
  for (const [i, part] of parts.entries()) {
    assert(part.length > 0 && part.length <= limit, `part ${i} has length ${part.length}`);
    assert(!LONE_SURROGATE.test(part), `part ${i} splits a surrogate pair`);
  }
}

// Fenced blocks of `text`, parsed independently of the implementation: [start, end) and opening line.
function fencedBlocks(text: string): { start: number; end: number; open: string }[] {
  const fences: [number, string][] = [];
  let at = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fences.push([at, line]);
    at += line.length + 1;
  }
  const blocks = [];
  for (let i = 0; i < fences.length; i += 2) {
    const [start, open] = fences[i];
    const close = fences[i + 1];
    blocks.push({ start, end: close ? close[0] + close[1].length : text.length, open });
  }
  return blocks;
}

// Joins `parts` after removing the fence markers added where a cut fell inside a fenced block of
// `original`; asserts that markers appear exactly at such cuts and reopen the block's opening line.
function unsplit(parts: string[], original: string, limit: number): string {
  const blocks = fencedBlocks(original);
  const inside = (at: number) => blocks.find((b) => b.start < at && at < b.end);
  let out = "";
  let reopen = "";
  for (const [i, part] of parts.entries()) {
    assert(part.startsWith(reopen), `part ${i} should reopen with ${JSON.stringify(reopen)}`);
    let body = part.slice(reopen.length);
    reopen = "";
    const next = (parts[i + 1] ?? "").slice(0, 1);
    const plain = original.startsWith(body + next, out.length) &&
      (i === parts.length - 1 || !inside(out.length + body.length));
    if (!plain) {
      assert(body.endsWith("```"), `part ${i} should close its fence`);
      const closed = body.slice(0, -3);
      body = original.startsWith(closed, out.length) ? closed : body.slice(0, -4);
      const block = inside(out.length + body.length);
      assert(block, `part ${i} closes a fence outside a fenced block`);
      assert(block.end - block.start > limit, `part ${i} cuts a fenced block that fits`);
      reopen = block.open + "\n";
    }
    assert(original.startsWith(body, out.length), `part ${i} does not continue the original`);
    out += body;
  }
  return out;
}

function prose(length: number): string {
  const sentence = "The quick brown fox jumps over the lazy dog near the riverbank. ";
  let text = "";
  for (let i = 1; text.length < length; i++) {
    text += sentence.repeat(3 + (i % 5)).trimEnd() + (i % 3 ? "\n\n" : "\n");
  }
  return text.slice(0, length);
}

Deno.test("splitMessage() returns short text, including the empty string, as one part", () => {
  assertEquals(splitMessage("hello", 4096), ["hello"]);
  assertEquals(splitMessage("", 2000), [""]);
});

Deno.test("splitMessage() keeps text of exactly the limit whole and cuts one character more", () => {
  assertEquals(splitMessage("a".repeat(4096), 4096), ["a".repeat(4096)]);
  assertEquals(splitMessage("a".repeat(4097), 4096), ["a".repeat(4096), "a"]);
});

Deno.test("splitMessage() splits 9,000 characters of prose into ordered parts at paragraphs", () => {
  const text = prose(9000);
  const parts = splitMessage(text, 4096);
  assertParts(parts, 4096);
  assertEquals(parts.length, 3);
  assertEquals(parts.join(""), text);
  for (const part of parts.slice(0, -1)) {
    assert(part.endsWith("\n\n"), "cut at a paragraph break");
    assert(part.length > 2048, "cut in the latter half of the window");
  }
});

Deno.test("splitMessage() hard-cuts a single 10,000-character word", () => {
  const word = "x".repeat(10000);
  const parts = splitMessage(word, 4096);
  assertEquals(parts.map((p) => p.length), [4096, 4096, 1808]);
  assertEquals(parts.join(""), word);
});

Deno.test("splitMessage() never splits a surrogate pair at the cut point", () => {
  const text = "x".repeat(4095) + "😀".repeat(3000);
  const parts = splitMessage(text, 4096);
  assertParts(parts, 4096);
  assertEquals(parts[0], "x".repeat(4095));
  assert(parts[1].startsWith("😀"));
  assertEquals(parts.join(""), text);
  assertEquals(splitMessage("👍🏽".repeat(20), 16).join(""), "👍🏽".repeat(20));
});

Deno.test("splitMessage() cuts before a fenced block that fits rather than inside it", () => {
  const intro = "word ".repeat(14) + "\n";
  const code = "```ts\nconst a = 1;\n\nconst b = 2;\n\nconst c = 3;\n```\nAfter the code.";
  assertEquals(splitMessage(intro + code, 100), [intro, code]);
});

Deno.test("splitMessage() closes and reopens a fenced block longer than the limit", () => {
  const lines = Array.from({ length: 300 }, (_, i) => `const value${i} = ${i * i};\n`);
  const text = "Here is the file:\n\n```ts\n" + lines.join("") + "```\n\nThat is all.";
  const parts = splitMessage(text, 500);
  assertParts(parts, 500);
  assert(parts.length > 10);
  for (const [i, part] of parts.entries()) {
    if (i > 0) assert(part.startsWith("```ts\n"), `part ${i} reopens the fence`);
    if (i < parts.length - 1) assert(part.endsWith("\n```"), `part ${i} closes the fence`);
    assertEquals(part.split("\n").filter((l) => l.startsWith("```")).length % 2, 0);
  }
  assertEquals(unsplit(parts, text, 500), text);
});

Deno.test("splitMessage() rejects a limit below 16 with a RangeError", () => {
  assert(assertThrows(() => splitMessage("hello world", 15)) instanceof RangeError);
});

Deno.test("splitMessage() keeps every part within the limit and loses nothing on random texts", () => {
  let seed = 0x5eed;
  const random = () => { // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const word = () => "abcdefghij".slice(0, 1 + Math.floor(random() * 10));
  const pieces = [
    () => word() + " ",
    () => word() + " ",
    () => word() + "\n",
    () => "\n\n",
    () => pick(["😀", "👍🏽 ", "🇺🇳"]),
    () => "y".repeat(20 + Math.floor(random() * 80)),
    () =>
      "\n```" + pick(["", "ts", "python"]) + "\n" +
      (word() + " " + word() + "\n").repeat(random() * (random() < 0.2 ? 400 : 40)) +
      (random() < 0.9 ? "```\n" : ""),
  ];
  for (let n = 0; n < 300; n++) {
    const size = n % 10 === 0 ? 12000 : 1 + Math.floor(random() * 3000);
    let text = "";
    while (text.length < size) text += pick(pieces)();
    for (const limit of [16, 50, 2000, 4096]) {
      const parts = splitMessage(text, limit);
      const where = `text ${n}, limit ${limit}`;
      assert(parts.length > 0, where);
      if (text.length <= limit) assertEquals(parts, [text], where);
      assertParts(parts, limit);
      assertEquals(unsplit(parts, text, limit), text, where);
      if (!text.includes("```")) assertEquals(parts.join(""), text, where);
    }
  }
});

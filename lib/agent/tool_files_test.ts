// Tests of a tool's files (toolResultFiles, storeToolFiles, turnFiles, withoutToolFiles); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { ChatMessage } from "./chat_model.ts";
import {
  FILES_ATTACHED_NOTE,
  storeToolFiles,
  toolResultFiles,
  turnFiles,
  withoutToolFiles,
} from "./tool_files.ts";

const signal = new AbortController().signal;

Deno.test("toolResultFiles() finds files only in the { files: [{ name, data | url }] } shape", () => {
  const found = toolResultFiles({ text: "hi", files: [{ name: "a.png", data: "AAAA" }] });
  assertEquals(found, { files: [{ name: "a.png", data: "AAAA" }], rest: { text: "hi" } });
  assertStrictEquals(toolResultFiles({ files: ["a.txt", "b.txt"] }), null);
  assertStrictEquals(toolResultFiles({ files: [] }), null);
  assertStrictEquals(toolResultFiles({ files: [{ name: "x" }] }), null);
  assertStrictEquals(toolResultFiles("files"), null);
  assertStrictEquals(toolResultFiles([{ name: "a", data: "AAAA" }]), null);
});

Deno.test("storeToolFiles() tells the model what was attached and why others were not, never the bytes", async () => {
  const found = toolResultFiles({
    summary: "done",
    files: [{ name: "a.png", data: "SECRETBYTES" }, { name: "b.bin", data: "X" }],
  })!;
  const stored = await storeToolFiles(found, (files) =>
    Promise.resolve({
      stored: [{ id: "p/h", type: "image/png", size: 8, name: files[0].name }],
      refused: [`${files[1].name}: not valid base64`],
    }), signal);
  const content = JSON.parse(stored.content);
  assertEquals(content, {
    summary: "done",
    files_attached: ["a.png (image/png, 8 bytes)"],
    note: FILES_ATTACHED_NOTE,
    files_not_sent: ["b.bin: not valid base64"],
  });
  assert(!stored.content.includes("SECRETBYTES"));
  assertEquals(stored.files, [{ id: "p/h", type: "image/png", size: 8, name: "a.png" }]);
});

Deno.test("storeToolFiles() without a store refuses every file by name and keeps none", async () => {
  const found = toolResultFiles({ files: [{ name: "a.png", data: "QUJD" }] })!;
  const stored = await storeToolFiles(found, undefined, signal);
  assertEquals(stored.files, []);
  assertEquals(JSON.parse(stored.content), {
    files_not_sent: ["a.png: files cannot be sent from here"],
  });
});

Deno.test("turnFiles() collects tool messages' files in order; withoutToolFiles() strips the field", () => {
  const file = (id: string) => ({ id, type: "image/png", size: 1 });
  const messages = [
    { role: "user", content: "go" },
    { role: "tool", tool_call_id: "1", content: "{}", files: [file("a")] },
    { role: "tool", tool_call_id: "2", content: "{}", files: [file("b"), file("c")] },
    { role: "assistant", content: "done" },
  ] as unknown as ChatMessage[];
  assertEquals(turnFiles(messages).map((f) => f.id), ["a", "b", "c"]);
  const wire = withoutToolFiles(messages);
  assert(wire.every((m) => !("files" in m)));
  assertStrictEquals(wire[0], messages[0]);
  const plain = [{ role: "user", content: "x" }] as ChatMessage[];
  assertStrictEquals(withoutToolFiles(plain), plain);
});

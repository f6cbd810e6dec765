// Unit tests of lib/openai/reply_files.ts: the Responses API's output_file items; Deno.
import { assertEquals } from "@std/assert";
import { outputFileItems } from "./reply_files.ts";

Deno.test("outputFileItems() makes one output_file item per file, ids unique within the response", () => {
  const items = outputFileItems("resp_abc", [
    { name: "a.png", type: "image/png", size: 3, url: "https://x/media/a" },
    { name: "b.txt", type: "text/plain", size: 5, url: null },
  ]);
  assertEquals(items, [
    {
      id: "msg_abc_file0",
      type: "output_file",
      status: "completed",
      filename: "a.png",
      mime_type: "image/png",
      size: 3,
      file_url: "https://x/media/a",
    },
    {
      id: "msg_abc_file1",
      type: "output_file",
      status: "completed",
      filename: "b.txt",
      mime_type: "text/plain",
      size: 5,
      file_url: null,
    },
  ]);
});

// Unit tests of lib/openai/media_body.ts: media characters of a request body, the raised limit; Deno.
import { assertStrictEquals } from "@std/assert";
import { mediaBodyLimit, mediaPayloadChars } from "./media_body.ts";

Deno.test("mediaPayloadChars() counts data URLs, file_data and input_audio data, not text", () => {
  const url = "data:image/png;base64,AAAA";
  const body = {
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "a string is media only when it starts with data:" },
        { type: "image_url", image_url: { url } },
        { type: "input_audio", input_audio: { data: "QUJD", format: "wav" } },
        { type: "input_file", file_data: "JVBERi0=" },
      ],
    }],
  };
  assertStrictEquals(mediaPayloadChars(body), url.length + 4 + 8);
  assertStrictEquals(mediaPayloadChars({ messages: [{ role: "user", content: "data" }] }), 0);
});

Deno.test("mediaBodyLimit() adds one medium of MEDIA_MAX_BYTES as base64 to the text limit", () => {
  assertStrictEquals(mediaBodyLimit(1000, 3000), 1000 + 4000 + 256);
});

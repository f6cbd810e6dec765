// Unit tests of sniffMediaType: each type by its magic bytes, names and declared types never counted; runs under Deno.
import { assertStrictEquals } from "@std/assert";
import { IMAGE_TYPES, sniffMediaType } from "./sniff_media_type.ts";

/** Strings as UTF-8, arrays as bytes, joined. */
const _bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(
    parts.flatMap((p) => typeof p === "string" ? [...new TextEncoder().encode(p)] : p),
  );

Deno.test("sniffMediaType() types each format by its magic bytes", () => {
  const cases: [Uint8Array, string | null][] = [
    [_bytes([0x89], "PNG\r\n\x1a\n", [0, 0]), "image/png"],
    [_bytes([0xff, 0xd8, 0xff, 0xe0]), "image/jpeg"],
    [_bytes("GIF89a", [1, 0]), "image/gif"],
    [_bytes("GIF87a", [1, 0]), "image/gif"],
    [_bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "), "image/webp"],
    [_bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "), "audio/wav"],
    [_bytes("%PDF-1.7\n"), "application/pdf"],
    [_bytes("OggS", [0, 2]), "audio/ogg"],
    [_bytes("ID3", [4, 0]), "audio/mpeg"],
    [_bytes([0xff, 0xfb, 0x90, 0x64]), "audio/mpeg"],
    [_bytes([0, 0, 0, 0x20], "ftypM4A ", [0, 0]), "audio/mp4"],
    [_bytes([0, 0, 0, 0x20], "ftypisom", [0, 0]), "video/mp4"],
    [_bytes("plain words, ünïcode too\n"), "text/plain"],
    [_bytes([0, 1, 2, 3, 0xfe]), null],
    [new Uint8Array(), null],
  ];
  for (const [bytes, type] of cases) assertStrictEquals(sniffMediaType(bytes), type, String(type));
});

Deno.test("sniffMediaType() reads no name: a GIF is a GIF whatever it was called", () => {
  const gif = _bytes("GIF89a", [1, 0, 1, 0]);
  assertStrictEquals(sniffMediaType(gif), "image/gif");
  assertStrictEquals(IMAGE_TYPES.has("image/gif"), true);
  assertStrictEquals(IMAGE_TYPES.has("text/plain"), false);
});

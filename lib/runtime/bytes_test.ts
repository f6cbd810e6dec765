// Unit tests of the byte helpers: hex, base64 and a prefixed body; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { decodeBase64, decodeHex, encodeBase64, encodeHex, withPrefix } from "./bytes.ts";

const encoder = new TextEncoder();

Deno.test("encodeHex() and decodeHex() round-trip bytes, either case", () => {
  const bytes = new Uint8Array([0, 1, 127, 128, 254, 255]);
  assertStrictEquals(encodeHex(bytes), "00017f80feff");
  assertEquals(decodeHex("00017f80feff"), bytes);
  assertEquals(decodeHex("00017F80FEFF"), bytes);
});

Deno.test("decodeHex() refuses empty, odd-length, non-hex and wrong-length text", () => {
  for (const text of ["", "0", "abc", "zz", "0g", " 00", "00 "]) {
    assertStrictEquals(decodeHex(text), null, JSON.stringify(text));
  }
  assertStrictEquals(decodeHex("0000", 1), null);
  assertStrictEquals(decodeHex("00", 2), null);
  assertEquals(decodeHex("0000", 2), new Uint8Array(2));
});

Deno.test("withPrefix() puts the UTF-8 prefix before the body", () => {
  assertEquals(withPrefix("v0:1:", encoder.encode("{}")), encoder.encode("v0:1:{}"));
});

Deno.test("encodeBase64() and decodeBase64() round-trip bytes; decodeBase64() refuses junk and wrong lengths", () => {
  const bytes = new Uint8Array([0, 1, 2, 250, 251, 255, 62, 63]);
  const text = encodeBase64(bytes);
  assertStrictEquals(text, "AAEC+vv/Pj8=");
  assertEquals(decodeBase64(text), bytes);
  assertEquals(decodeBase64(text, 8), bytes);
  assertStrictEquals(decodeBase64(text, 9), null);
  for (const junk of ["", "AAE", "AA=A", "A$==", "AAEC+vv/Pj8", " AAEC+vv/Pj8="]) {
    assertStrictEquals(decodeBase64(junk), null, junk);
  }
});

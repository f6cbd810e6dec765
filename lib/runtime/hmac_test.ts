// Unit tests of HMAC signing and verifying (SHA-256 and SHA-1) and the constant-time compare; Deno.
import { assert, assertStrictEquals } from "@std/assert";
import { encodeHex } from "./bytes.ts";
import { constantTimeEquals, hmacSign, hmacVerify } from "./hmac.ts";

const encoder = new TextEncoder();

Deno.test("hmacSign() matches GitHub's documented test vector", async () => {
  const mac = await hmacSign("It's a Secret to Everybody", "Hello, World!");
  assertStrictEquals(
    encodeHex(mac),
    "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
  );
});

Deno.test("hmacVerify() accepts the right MAC and refuses another secret, body or MAC", async () => {
  const body = encoder.encode("payload");
  const mac = new Uint8Array(await hmacSign("secret", body));
  assert(await hmacVerify("secret", mac, body));
  assert(!await hmacVerify("secret2", mac, body));
  assert(!await hmacVerify("secret", mac, encoder.encode("payload ")));
  const flipped = new Uint8Array(mac);
  flipped[31] ^= 1;
  assert(!await hmacVerify("secret", flipped, body));
  assert(!await hmacVerify("secret", mac.slice(0, 16), body));
});

Deno.test("constantTimeEquals() is true only for identical strings", async () => {
  assert(await constantTimeEquals("tg-secret", "tg-secret"));
  assert(await constantTimeEquals("", ""));
  for (
    const [a, b] of [
      ["tg-secret", "tg-secreT"],
      ["tg-secret", "tg-secret0"],
      ["tg-secret", "tg-secre"],
      ["tg-secret", ""],
      ["", "x"],
      ["abc", "ABC"],
    ]
  ) {
    assert(!await constantTimeEquals(a, b), `${a} vs ${b}`);
    assert(!await constantTimeEquals(b, a), `${b} vs ${a}`);
  }
});

Deno.test("hmacSign() and hmacVerify() take SHA-1 where asked (RFC 2202 test case 2)", async () => {
  const mac = await hmacSign("Jefe", "what do ya want for nothing?", "SHA-1");
  assertStrictEquals(encodeHex(mac), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  const data = new TextEncoder().encode("what do ya want for nothing?");
  assert(await hmacVerify("Jefe", new Uint8Array(mac), data, "SHA-1"));
  assert(!(await hmacVerify("Jefe", new Uint8Array(mac), data)), "SHA-256 by default");
});

// Tests of the signed media links (mediaFileUrl, verifyMediaUrl, mediaLinker); Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { mediaFileUrl, mediaLinker, verifyMediaUrl } from "./media_url.ts";

const ID = "0123456789abcdef01234567/0123456789abcdef0123456789abcdef01234567";
const NOW = 1_700_000_000;

/** The id, exp and sig a link carries. */
function parts(link: string): [string, string | null, string | null] {
  const url = new URL(link);
  return [
    url.pathname.slice("/media/".length),
    url.searchParams.get("exp"),
    url.searchParams.get("sig"),
  ];
}

Deno.test("verifyMediaUrl() accepts its own link until it expires, then says expired", async () => {
  const link = await mediaFileUrl("https://b.example/", "s3cret-key", ID, NOW, 60);
  assertStrictEquals(link.startsWith(`https://b.example/media/${ID}?exp=${NOW + 60}&sig=`), true);
  const [id, exp, sig] = parts(link);
  assertStrictEquals(await verifyMediaUrl("s3cret-key", id, exp, sig, NOW + 60), "ok");
  assertStrictEquals(await verifyMediaUrl("s3cret-key", id, exp, sig, NOW + 61), "expired");
});

Deno.test("verifyMediaUrl() refuses another secret, a changed expiry or id, and malformed parts", async () => {
  const [id, exp, sig] = parts(await mediaFileUrl("https://b.example", "s3cret-key", ID, NOW));
  assertStrictEquals(await verifyMediaUrl("other-key", id, exp, sig, NOW), "bad_signature");
  assertStrictEquals(
    await verifyMediaUrl("s3cret-key", id, String(Number(exp) + 1), sig, NOW),
    "bad_signature",
  );
  const otherId = ID.replace(/^0/, "1");
  assertStrictEquals(await verifyMediaUrl("s3cret-key", otherId, exp, sig, NOW), "bad_signature");
  for (
    const [i, e, s] of [
      [id, null, sig],
      [id, exp, null],
      [id, "12ab", sig],
      [id, exp, "zz"],
      ["../etc/passwd", exp, sig],
    ] as const
  ) {
    assertStrictEquals(await verifyMediaUrl("s3cret-key", i, e, s, NOW), "malformed");
  }
});

Deno.test("mediaLinker() makes links only with a secret and an http(s) PUBLIC_URL", async () => {
  assertEquals(mediaLinker(null), null);
  assertEquals(mediaLinker({ secret: "s3cret-key", publicUrl: "" }), null);
  const link = mediaLinker(
    { secret: "s3cret-key", publicUrl: "https://b.example" },
    () => NOW * 1000,
  );
  const made = await link!({ id: ID });
  const [id, exp, sig] = parts(made);
  assertStrictEquals(await verifyMediaUrl("s3cret-key", id, exp, sig, NOW), "ok");
});

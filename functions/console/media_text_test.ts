// Unit tests of the console's words for media; Deno.
import { assertEquals } from "@std/assert";
import { isImage, mediumPath, mediumPlaceholder, sizeText } from "./media_text.ts";

Deno.test("mediumPlaceholder() names an image or a file with its size, a link by its URL", () => {
  const png = { id: "ab12/cd34", type: "image/png", size: 68, name: "cat.png" };
  const pdf = { id: "ab12/ef56", type: "application/pdf", size: 2048 };
  assertEquals(mediumPlaceholder(png), "[image: cat.png, 68 B]");
  assertEquals(mediumPlaceholder(pdf), "[file: application/pdf, 2.0 kB]");
  assertEquals(mediumPlaceholder({ url: "https://x.test/a.png" }), "[image: https://x.test/a.png]");
  assertEquals([isImage(png), isImage(pdf)], [true, false]);
  assertEquals(sizeText(1_500_000), "1.5 MB");
  assertEquals(
    mediumPath("slack:T1/C2", "ab12/cd34"),
    "/v1/sessions/slack%3AT1%2FC2/media/ab12/cd34",
  );
});

// Unit tests of the console's words for spend; Deno.
import { assertEquals } from "@std/assert";
import { costText, tokensText, utcDayText } from "./usage_text.ts";

Deno.test("tokensText(), costText() and utcDayText() word a day's usage", () => {
  assertEquals(tokensText(1234567), "1,234,567");
  assertEquals(tokensText(12), "12");
  assertEquals(costText(0.5), "0.5000");
  assertEquals(costText(0.000123), "0.000123");
  assertEquals(utcDayText(Date.UTC(2026, 10, 26, 23, 59)), "2026-11-26");
});

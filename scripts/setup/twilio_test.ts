// Unit test of the Twilio setup's request signature against twilio's own helper; Deno.
import { assertEquals } from "@std/assert";
import twilio from "twilio";
import { twilioSignature } from "./twilio.ts";

Deno.test("twilioSignature() matches twilio's getExpectedTwilioSignature for a status callback", async () => {
  const url = "https://bot.example.com/prefix/webhooks/twilio";
  const params = new URLSearchParams({
    MessageStatus: "delivered",
    AccountSid: "AC" + "0".repeat(32),
    MessageSid: "SM" + "1".repeat(32),
  });
  assertEquals(
    await twilioSignature("auth-token-value", url, params),
    twilio.getExpectedTwilioSignature("auth-token-value", url, Object.fromEntries(params)),
  );
});

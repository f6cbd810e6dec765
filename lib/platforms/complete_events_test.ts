// Unit tests: every adapter's parse returns a complete event (platform, session key, sender) that the route passes on untouched; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { DRIVERS } from "../../test/_support/drivers/mod.ts";
import type { Ingress, PlatformAdapter } from "../chat/mod.ts";
import { chatInbound } from "./chat_inbound.ts";
import { platformAdapters } from "./mod.ts";

/** Every webhook platform's adapter, loaded. */
const ADAPTERS = await platformAdapters();

/** The one message a driver's delivery of `text` parses to, with its adapter. */
async function parsed(driverName: string, text: string) {
  const driver = DRIVERS.find((d) => d.name === driverName)!;
  const adapter: PlatformAdapter = ADAPTERS.find((a) => a.name === driver.name)!;
  const chat = driver.newChat();
  const delivery = await driver.message({ chat, text });
  const ingress: Ingress = adapter.parse(
    {
      headers: new Headers(delivery.headers),
      body: new TextEncoder().encode(delivery.body),
      url: `https://baton.test${driver.path}`,
      nowSeconds: Math.floor(Date.now() / 1000),
    },
    driver.vars(),
  );
  const message = ingress.kind === "message"
    ? ingress.message
    : ingress.kind === "messages"
    ? ingress.messages[0]
    : ingress.kind === "run"
    ? ingress.message
    : null;
  assert(message, `${driver.name}: a message, not ${ingress.kind}`);
  return { adapter, driver, chat, message };
}

for (const driver of DRIVERS) {
  Deno.test(`${driver.name} adapter's parse() returns a complete event: platform, session key and sender as the session binds them`, async () => {
    const { adapter, chat, message } = await parsed(driver.name, "hello there");
    assertStrictEquals(message.sessionKey, driver.session(chat));
    assertStrictEquals(message.context.session_key, message.sessionKey);
    // The generic webhook's turns have always been bound as "webhook"; its senders are "generic".
    assertStrictEquals(
      message.context.platform,
      adapter.name === "generic" ? "webhook" : adapter.name,
    );
    assertStrictEquals(message.sender.platform, adapter.name);
  });
}

Deno.test("chatInbound() carries the event as parsed and the gate's verdict, adding nothing of its own", async () => {
  const { message } = await parsed("telegram", "/status now");
  const inbound = chatInbound(message, {
    admin: true,
    command: { command: "status", word: "status", argument: "now" },
  });
  assertEquals(inbound, {
    text: message.text,
    deliveryKey: message.deliveryKey,
    context: message.context,
    reply: (message as { reply?: unknown }).reply,
    command: { command: "status", word: "status", argument: "now" },
    admin: true,
  });
  // Not an admin, in a shared chat: no admin mark, the group mark from the sender.
  const group = { ...message, sender: { ...message.sender, direct: false } };
  const member = chatInbound(group, { admin: false, command: null });
  assertStrictEquals(member.admin, undefined);
  assertStrictEquals(member.group, true);
  assertStrictEquals(member.command, null);
});

// Tests for the bench's fake Telegram and timed update sender (scripts/bench/telegram.ts), against a loopback webhook; Deno.
import { assert, assertEquals } from "@std/assert";
import { sendTelegramUpdate, startTelegramObserver, type TelegramObserver } from "./telegram.ts";

/**
 * A loopback webhook that treats updates as baton does: an `update_id` seen before in the chat is
 * Telegram redelivering it, acked with a bare 200; any other is echoed back through `observer`.
 */
function _dedupingWebhook(observer: TelegramObserver) {
  const seen = new Set<string>();
  const ids: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const update = await req.json() as {
      update_id: number;
      message: { message_id: number; chat: { id: number }; text: string };
    };
    ids.push(update.update_id);
    const key = `${update.message.chat.id}:${update.update_id}`;
    if (!seen.has(key)) {
      seen.add(key);
      const res = await fetch(`${observer.url}/botX/sendMessage`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          chat_id: update.message.chat.id,
          text: update.message.text,
          reply_parameters: { message_id: update.message.message_id },
        }),
      });
      await res.body?.cancel();
    }
    return new Response("ok");
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`,
    ids,
    close: () => server.shutdown(),
  };
}

Deno.test("sendTelegramUpdate() gives each update an id of its own: a later phase's first message in a chat is answered", async () => {
  const observer = startTelegramObserver();
  const webhook = _dedupingWebhook(observer);
  try {
    // The live phase's second message, then the access phase's first, in the same chat (issue 32).
    const live = await sendTelegramUpdate(webhook.url, observer, {
      chatId: 7_000_001,
      messageId: 2,
      text: "live 1",
    });
    const open1 = await sendTelegramUpdate(webhook.url, observer, {
      chatId: 7_000_001,
      messageId: 1,
      text: "tg access open 1",
    });
    const other = await sendTelegramUpdate(webhook.url, observer, {
      chatId: 7_200_002,
      messageId: 2,
      text: "tg access checked 2",
    });
    assertEquals([live.error, open1.error, other.error], [undefined, undefined, undefined]);
    assert(live.ok && open1.ok && other.ok);
    assertEquals(new Set(webhook.ids).size, 3, `update ids sent: ${webhook.ids.join(", ")}`);
    assertEquals([live.updateId, open1.updateId, other.updateId], webhook.ids);
  } finally {
    await webhook.close();
    await observer.close();
  }
});

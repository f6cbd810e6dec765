// The bench Workers' own Telegram reply (the floor Worker's and the peer's): one sendMessage, as any bot sends it; workerd.

/**
 * Sends `text` to `chatId` as a reply to `messageId` through the Bot API at `apiRoot` (the bench's
 * fake Telegram), and drains the answer. The two bench Workers that are not baton send the same
 * request, so their figures differ only in what they do around it.
 */
export async function sendTelegramReply(
  apiRoot: string,
  token: string,
  chatId: number,
  messageId: number,
  text: string,
): Promise<void> {
  const root = apiRoot.replace(/\/+$/, "");
  const sent = await fetch(`${root}/bot${token}/sendMessage`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      chat_id: chatId,
      text,
      reply_parameters: { message_id: messageId, allow_sending_without_reply: true },
    }),
  });
  await sent.body?.cancel();
}

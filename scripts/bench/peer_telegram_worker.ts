// Bench peer: a minimal Telegram bot Worker as a chat framework builds one (ack at once, handle in waitUntil, in-memory state); workerd.

import { sendTelegramReply } from "./_telegram_reply.ts";

interface Env {
  LLM_BASE_URL: string;
  LLM_API_KEY?: string;
  TELEGRAM_WEBHOOK_SECRET: string;
  TELEGRAM_BOT_TOKEN: string;
  TELEGRAM_API_ROOT: string;
}

interface Update {
  update_id?: number;
  message?: {
    message_id?: number;
    chat?: { id?: number };
    from?: { is_bot?: boolean };
    text?: string;
  };
}

/** The part of the Workers ExecutionContext used here (deno check has no Workers types). */
interface Ctx {
  waitUntil(promise: Promise<unknown>): void;
}

type ChatMessage = { role: "user" | "assistant"; content: string };

// The whole state lives in this isolate's memory, as with a framework's in-memory state adapter:
// nothing is durable, so a restart forgets the history, and an update in flight is lost.
/** Update ids already taken (Telegram redelivers until a 2xx), bounded. */
const seen = new Set<number>();
/** Each chat's recent messages, sent to the model as its history. */
const histories = new Map<number, ChatMessage[]>();
/** Each chat's tail of work: one message at a time per chat, in arrival order. */
const locks = new Map<number, Promise<void>>();
const HISTORY_WINDOW = 40, SEEN_MAX = 10_000;

async function handle(env: Env, chatId: number, messageId: number, text: string): Promise<void> {
  const history = histories.get(chatId) ?? [];
  history.push({ role: "user", content: text });
  const res = await fetch(`${env.LLM_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${env.LLM_API_KEY ?? ""}`,
    },
    body: JSON.stringify({ model: "any", messages: history.slice(-HISTORY_WINDOW) }),
  });
  const completion = await res.json() as { choices?: { message?: { content?: string } }[] };
  const reply = completion.choices?.[0]?.message?.content ?? "";
  history.push({ role: "assistant", content: reply });
  histories.set(chatId, history.slice(-HISTORY_WINDOW));
  await sendTelegramReply(env.TELEGRAM_API_ROOT, env.TELEGRAM_BOT_TOKEN, chatId, messageId, reply);
}

export default {
  async fetch(req: Request, env: Env, ctx: Ctx): Promise<Response> {
    if (req.method !== "POST") return new Response("method not allowed", { status: 405 });
    if (req.headers.get("X-Telegram-Bot-Api-Secret-Token") !== env.TELEGRAM_WEBHOOK_SECRET) {
      return new Response("unauthorized", { status: 401 });
    }
    const update = await req.json().catch(() => null) as Update | null;
    const message = update?.message;
    const chatId = message?.chat?.id, messageId = message?.message_id;
    if (
      typeof update?.update_id !== "number" || typeof chatId !== "number" ||
      typeof messageId !== "number" || !message?.text || message.from?.is_bot ||
      seen.has(update.update_id)
    ) {
      return Response.json({ ok: true });
    }
    seen.add(update.update_id);
    if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!);
    const text = message.text;
    const work = (locks.get(chatId) ?? Promise.resolve())
      .then(() => handle(env, chatId, messageId, text))
      .catch((e) => console.error("peer: reply failed", e));
    locks.set(chatId, work);
    // Acknowledged before the model is called: the reply runs after the response, in waitUntil.
    ctx.waitUntil(work.finally(() => {
      if (locks.get(chatId) === work) locks.delete(chatId);
    }));
    return Response.json({ ok: true });
  },
};

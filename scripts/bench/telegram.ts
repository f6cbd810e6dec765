// Bench fake Telegram Bot API on loopback that timestamps each sendMessage's arrival and numbers the updates (getFile and photo downloads too: bench_photo.ts), and a timed update sender; Deno.
import { benchPhotoSizes, telegramFileAnswer } from "./bench_photo.ts";

/** Webhook secret and bot token every bench Worker is configured with. */
export const TG_SECRET = "bench-tg-secret_1";
/** A token of the form Telegram's adapter requires (`<bot id>:<secret>`). */
export const TG_TOKEN = "424242:bench-token_value";

/** One sendMessage received, with its arrival time on this process's `performance.now()` clock. */
export interface TelegramSend {
  at: number;
  chatId: number;
  text: string;
  /** `reply_parameters.message_id` (0 when absent). */
  replyTo: number;
}

/** A presence call: a `typing` chat action or a draft of the reply (`sendMessageDraft`). */
export interface TelegramSignal {
  at: number;
  chatId: number;
  method: "sendChatAction" | "sendMessageDraft";
}

/** Handle on the observer: every send by text, and a wait for the send answering a text. */
export interface TelegramObserver {
  /** API root for `TELEGRAM_API_ROOT`, e.g. "http://127.0.0.1:PORT". */
  url: string;
  /** Every sendMessage, in arrival order. */
  sends: TelegramSend[];
  /** Every typing action and draft, in arrival order (shown to nobody for good). */
  signals: TelegramSignal[];
  /** Resolves with the first send whose text is `text`, or undefined after `timeoutMs`. */
  waitFor(text: string, timeoutMs: number): Promise<TelegramSend | undefined>;
  /**
   * The next `update_id`: one increasing sequence for the whole run, as Telegram numbers a bot's
   * updates. baton takes a repeated id in a chat for Telegram redelivering that update and
   * answers it with a bare 200 (exactly-once replies), so ids chosen by each phase once collided:
   * the live phase's update 700001 in chat 7000001 swallowed the access phase's first message.
   */
  nextUpdateId(): number;
  close(): Promise<void>;
}

/**
 * Starts the observer on 127.0.0.1. Unlike test/_support/fake_platform.ts it records when each
 * call arrived (taken before its body is read) and wakes a waiter at once instead of polling.
 */
export function startTelegramObserver(): TelegramObserver {
  const sends: TelegramSend[] = [];
  const signals: TelegramSignal[] = [];
  const waiters = new Map<string, (send: TelegramSend) => void>();
  let nextId = 1, updateId = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const at = performance.now();
    const body = await req.json().catch(() => ({})) as {
      chat_id?: unknown;
      text?: unknown;
      reply_parameters?: { message_id?: unknown };
    };
    const file = telegramFileAnswer(new URL(req.url).pathname, body as { file_id?: unknown });
    if (file) return file;
    const method = new URL(req.url).pathname.split("/").pop();
    if (method === "sendChatAction" || method === "sendMessageDraft") {
      signals.push({ at, chatId: Number(body.chat_id), method });
      return Response.json({ ok: true, result: true });
    }
    if (method !== "sendMessage") {
      return Response.json({ ok: false, description: "Not Found" }, { status: 404 });
    }
    const send: TelegramSend = {
      at,
      chatId: Number(body.chat_id),
      text: String(body.text ?? ""),
      replyTo: Number(body.reply_parameters?.message_id ?? 0),
    };
    sends.push(send);
    waiters.get(send.text)?.(send);
    return Response.json({ ok: true, result: { message_id: nextId++ } });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    sends,
    signals,
    waitFor(text, timeoutMs) {
      const seen = sends.find((s) => s.text === text);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(text);
          resolve(undefined);
        }, timeoutMs);
        waiters.set(text, (send) => {
          clearTimeout(timer);
          waiters.delete(text);
          resolve(send);
        });
      });
    },
    nextUpdateId: () => ++updateId,
    close: () => server.shutdown(),
  };
}

/** One update's timings from the start of its webhook POST; NaN where it never happened. */
export interface TelegramSample {
  ackMs: number;
  replyMs: number;
  ok: boolean;
  /** Why it failed (status, body, missing or misaddressed reply), when not ok. */
  error?: string;
  /** The `update_id` it was sent with (from `TelegramObserver.nextUpdateId`). */
  updateId: number;
}

/**
 * POSTs a private-chat text `message` update (with `photo`, a photo of that file id captioned
 * `text`) to `webhookUrl` with the secret-token header and an
 * `update_id` from `observer`, as Telegram does, and waits (10 s at most) for the echoed reply to
 * reach `observer`. ok when the ack is a 200 and the reply quotes this message in this chat.
 */
export async function sendTelegramUpdate(
  webhookUrl: string,
  observer: TelegramObserver,
  update: { chatId: number; messageId: number; text: string; photo?: string },
): Promise<TelegramSample> {
  const updateId = observer.nextUpdateId();
  const user = { id: update.chatId, is_bot: false, first_name: "Bench" };
  const body = JSON.stringify({
    update_id: updateId,
    message: {
      message_id: update.messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: update.chatId, type: "private", first_name: "Bench" },
      from: user,
      // A photo carries its text as the caption (Telegram's getFile serves the photo's bytes).
      ...(update.photo
        ? { caption: update.text, photo: benchPhotoSizes(update.photo) }
        : { text: update.text }),
    },
  });
  const t0 = performance.now();
  const reply = observer.waitFor(update.text, 10_000);
  let ackMs = NaN, error = "";
  try {
    const res = await fetch(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET },
      body,
    });
    const answer = await res.text();
    ackMs = performance.now() - t0;
    if (res.status !== 200) error = `ack ${res.status} ${answer.slice(0, 200)}`;
  } catch (e) {
    error = `webhook fetch failed: ${e}`;
  }
  const send = await reply;
  if (!send) {
    error ||= `no reply to ${JSON.stringify(update.text)} (update ${updateId}, chat ` +
      `${update.chatId}) within 10 s`;
  } else if (send.chatId !== update.chatId || send.replyTo !== update.messageId) {
    error ||= `reply misaddressed: chat ${send.chatId}, reply to ${send.replyTo}`;
  }
  return {
    ackMs,
    replyMs: send ? send.at - t0 : NaN,
    ok: !error,
    ...(error ? { error } : {}),
    updateId,
  };
}

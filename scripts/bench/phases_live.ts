// Bench phase "telegram live reply": how soon a slow reply shows in a private chat (typing, first draft) next to when it is finished; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Rig } from "./rig.ts";

/** What each message asks: the model echoes it in `_PIECES` pieces, one every `_PIECE_MS`. */
const _TEXT =
  "live reply: the quick brown fox jumps over the lazy dog, and then once more, slowly.";
const _PIECES = 20;
const _PIECE_MS = 100;

/**
 * Telegram private-chat messages whose reply the model writes over about two seconds, one at a
 * time, each in a chat of its own. From the start of the webhook POST: the first `typing` action,
 * the first draft of the reply (`sendMessageDraft`, the first visible text), and the final
 * `sendMessage`. baton shows nothing for its first second (a quick reply needs no presence), so
 * the first signs are expected a little after one second, the reply after the model's two.
 */
export async function liveReply(rig: Rig, report: Report): Promise<void> {
  const N = 20;
  const chatBase = 7_000_000;
  rig.fake.script((req) =>
    req.lastUserText.startsWith("live ")
      ? { kind: "text", text: req.lastUserText, pieces: _PIECES, pieceDelayMs: _PIECE_MS }
      : { kind: "text", text: req.lastUserText }
  );
  const typing: number[] = [], draft: number[] = [], reply: number[] = [];
  let answered = 0, drafted = 0;
  try {
    for (let i = 0; i < N; i++) {
      const chatId = chatBase + i;
      const text = `live ${i} ${_TEXT}`;
      const t0 = performance.now();
      const sample = await rig.telegramUpdate(rig.baton, {
        chatId,
        messageId: i + 1,
        text,
      });
      if (!sample.ok) continue;
      answered++;
      reply.push(sample.replyMs);
      const signals = rig.telegram.signals.filter((s) => s.chatId === chatId);
      const first = (method: string) => signals.find((s) => s.method === method)?.at;
      const typed = first("sendChatAction"), drew = first("sendMessageDraft");
      if (typed !== undefined) typing.push(typed - t0);
      if (drew !== undefined) draft.push(drew - t0), drafted++;
    }
  } finally {
    rig.fake.script((req) => ({ kind: "text", text: req.lastUserText }));
  }
  report.joined("telegram live reply (2 s of writing): first typing p50 / p99 (ms)", {
    live_typing_p50_ms: r2(pct(typing, 0.5)),
    live_typing_p99_ms: r2(pct(typing, 0.99)),
  });
  report.joined("telegram live reply: first visible text (first draft) p50 / p99 (ms)", {
    live_first_text_p50_ms: r2(pct(draft, 0.5)),
    live_first_text_p99_ms: r2(pct(draft, 0.99)),
  });
  report.joined("telegram live reply: final reply p50 / p99 (ms)", {
    live_reply_p50_ms: r2(pct(reply, 0.5)),
    live_reply_p99_ms: r2(pct(reply, 0.99)),
  });
  report.ratio(
    "telegram live reply: first visible text / final reply, p50",
    "live_first_text_reply_ratio",
    pct(draft, 0.5) / pct(reply, 0.5),
  );
  const finals = rig.telegram.sends.filter((s) => s.chatId >= chatBase && s.chatId < chatBase + N);
  report.check(
    "telegram live reply: replies OK / shown as drafts first / each sent once",
    "live_ok",
    answered === N && drafted === N && finals.length === N,
    `${answered}/${N} / ${drafted}/${N} / ${finals.length} sends`,
  );
}

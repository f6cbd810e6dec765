// Bench phase "telegram: webhook → reply": ack and reply latency of baton vs a minimal waitUntil peer Worker; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Rig } from "./rig.ts";
import type { TelegramSample } from "./telegram.ts";

/** One Worker under test: how to send it an update, and where its figures go. */
interface _Target {
  /** Key suffix and label: "baton" (also for the baseline, whose report adds `baseline_`) or "peer". */
  name: "baton" | "peer";
  report: Report;
  send(update: { chatId: number; messageId: number; text: string }): Promise<TelegramSample>;
  /** Chat ids of this target: its warm chat is `chatBase`, its new chats follow. */
  chatBase: number;
  samples: { new: TelegramSample[]; warm: TelegramSample[] };
}

/** Percentile `p` of the ack or reply times that happened. */
const _ms = (samples: TelegramSample[], field: "ack" | "reply", p: number) =>
  pct(samples.map((s) => s[`${field}Ms`]).filter((ms) => !Number.isNaN(ms)), p);

/**
 * Telegram message updates sent one at a time, as Telegram sends them, to baton (and the
 * baseline) and to the peer Worker (scripts/bench/peer_telegram_worker.ts: ack at once, model call
 * and sendMessage in waitUntil, in-memory state), taking turns update by update. Measures from
 * the start of the webhook POST (a) the ack: its response read, and (b) the reply: the echoed
 * sendMessage's arrival at the fake Telegram. A new chat each time and one warm chat, alternating
 * (then the warm chat alone once the new ones are done). The next update leaves only once the
 * reply has arrived.
 */
export async function telegram(rig: Rig, report: Report): Promise<void> {
  const WARM = 5, NEW = 100, N = 200;
  const targets: _Target[] = [
    ...rig.batons.map((baton, i): _Target => ({
      name: "baton",
      report: baton.report,
      send: (update) => rig.telegramUpdate(baton, update),
      chatBase: (i + 1) * 1_000_000,
      samples: { new: [], warm: [] },
    })),
    {
      name: "peer",
      report,
      send: (update) => rig.telegramUpdate("peer", update),
      chatBase: 9_000_000,
      samples: { new: [], warm: [] },
    },
  ];
  let seq = 0, newChats = 0;
  const send = (target: _Target, chat: "new" | "warm", label: string) => {
    const id = ++seq;
    const chatId = chat === "warm" ? target.chatBase : target.chatBase + ++newChats;
    const text = `tg ${label} ${target.name} ${chatId} ${id}`;
    return target.send({ chatId, messageId: id, text });
  };
  // Warm-up: each Worker's code paths, its warm chat and its first new-chat objects.
  for (let i = 0; i < WARM; i++) {
    for (const t of targets) await send(t, "warm", "warm-up"), await send(t, "new", "warm-up");
  }
  // New and warm chats alternate too (a new chat every other update while there are new ones to
  // measure): the new / warm ratio then compares samples taken under the same load.
  const order = Array.from(
    { length: NEW + N },
    (_, i): "new" | "warm" => i % 2 === 0 && i / 2 < NEW ? "new" : "warm",
  );
  for (const [i, chat] of order.entries()) {
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(i + k) % targets.length];
      t.samples[chat].push(await send(t, chat, chat));
    }
  }
  // Late duplicates would show up after their message's reply: give them a moment to arrive.
  await new Promise((resolve) => setTimeout(resolve, 300));

  const peer = targets[targets.length - 1];
  for (const chat of ["new", "warm"] as const) {
    const key = chat === "new" ? "tg_new_" : "tg_";
    const where = chat === "new" ? "new chat each time" : "warm chat";
    for (const t of targets) {
      for (const field of ["ack", "reply"] as const) {
        const what = field === "ack" ? "ack" : "webhook → reply";
        t.report.joined(`telegram, ${where}: ${what} p50 / p99 (ms), ${t.name}`, {
          [`${key}${field}_p50_ms_${t.name}`]: r2(_ms(t.samples[chat], field, 0.5)),
          [`${key}${field}_p99_ms_${t.name}`]: r2(_ms(t.samples[chat], field, 0.99)),
        });
      }
    }
    for (const t of targets) {
      if (t === peer) continue;
      for (const field of ["ack", "reply"] as const) {
        t.report.ratio(
          `telegram, ${where}: ${field} p50 ratio baton / peer`,
          `${key}${field}_p50_ratio_baton_peer`,
          _ms(t.samples[chat], field, 0.5) / _ms(peer.samples[chat], field, 0.5),
        );
      }
    }
  }
  // The first message like the hundredth (issue 32): a new chat's p50 over a warm chat's.
  for (const t of targets) {
    for (const field of ["ack", "reply"] as const) {
      t.report.ratio(
        `telegram: ${field} p50 ratio new chat / warm chat, ${t.name}`,
        `tg_${field}_p50_ratio_new_warm_${t.name}`,
        _ms(t.samples.new, field, 0.5) / _ms(t.samples.warm, field, 0.5),
      );
    }
  }
  for (const t of targets) {
    const sends = rig.telegram.sends.filter((s) =>
      s.chatId >= t.chatBase && s.chatId < t.chatBase + 1_000_000
    );
    const replies = sends.filter((s) => s.text.startsWith("tg "));
    const distinct = new Set(replies.map((s) => s.text)).size;
    const all = [...t.samples.new, ...t.samples.warm];
    const ok = all.filter((s) => s.ok).length;
    t.report.check(
      `telegram: replies OK / each update answered once / other sends (busy notices), ${t.name}`,
      `tg_ok_${t.name}`,
      ok === all.length && distinct === replies.length,
      `${ok}/${all.length} / ${replies.length - distinct} twice / ${sends.length - replies.length}`,
    );
  }
}

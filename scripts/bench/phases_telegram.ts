// Bench phase "telegram: webhook → reply": ack and reply latency of baton vs the floor Worker's chat route and a minimal waitUntil peer Worker, new chats and a warm one alternating; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Rig } from "./rig.ts";
import type { TelegramSample } from "./telegram.ts";

/** One Worker under test: how to send it an update, and where its figures go. */
export interface ChatTarget {
  /**
   * Key suffix and label: "baton" (also for the baseline, whose report adds `baseline_`), "peer",
   * or "floor" (the floor Worker's chat route: store, ack, model call, store, reply).
   */
  name: "baton" | "peer" | "floor";
  report: Report;
  send(update: { chatId: number; messageId: number; text: string }): Promise<TelegramSample>;
  /** Chat ids of this target: its warm chat is `chatBase`, its new chats follow. */
  chatBase: number;
  samples: { new: TelegramSample[]; warm: TelegramSample[] };
}

/** Percentile `p` of the ack or reply times that happened. */
export const chatMs = (samples: TelegramSample[], field: "ack" | "reply", p: number): number =>
  pct(samples.map((s) => s[`${field}Ms`]).filter((ms) => !Number.isNaN(ms)), p);

/** The floor Worker's chat route as a target, its chats from `chatBase`. */
export function floorTarget(rig: Rig, report: Report, chatBase: number): ChatTarget {
  return {
    name: "floor",
    report,
    send: (update) => rig.telegramUpdate("floor", update),
    chatBase,
    samples: { new: [], warm: [] },
  };
}

/**
 * Telegram updates sent one at a time to `targets`, taking turns update by update: `warmUp`
 * rounds of a warm and a new chat (each Worker's code paths, its warm chat and its first new-chat
 * objects), then `fresh` new chats and `warm` updates of the warm chat, a new chat every other
 * update while there are new ones to measure (the new / warm ratio then compares samples taken
 * under the same load). Samples land in each target's `samples`.
 */
export async function alternateChats(
  targets: ChatTarget[],
  counts: { warmUp: number; fresh: number; warm: number },
): Promise<void> {
  let seq = 0;
  const newChats = new Map<ChatTarget, number>();
  const send = (target: ChatTarget, chat: "new" | "warm", label: string) => {
    const id = ++seq;
    const n = (newChats.get(target) ?? 0) + 1;
    if (chat === "new") newChats.set(target, n);
    const chatId = chat === "warm" ? target.chatBase : target.chatBase + n;
    const text = `tg ${label} ${target.name} ${chatId} ${id}`;
    return target.send({ chatId, messageId: id, text });
  };
  for (let i = 0; i < counts.warmUp; i++) {
    for (const t of targets) await send(t, "warm", "warm-up"), await send(t, "new", "warm-up");
  }
  const order = Array.from(
    { length: counts.fresh + counts.warm },
    (_, i): "new" | "warm" => i % 2 === 0 && i / 2 < counts.fresh ? "new" : "warm",
  );
  for (const [i, chat] of order.entries()) {
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(i + k) % targets.length];
      t.samples[chat].push(await send(t, chat, chat));
    }
  }
  // Late duplicates would show up after their message's reply: give them a moment to arrive.
  await new Promise((resolve) => setTimeout(resolve, 300));
}

/**
 * Telegram message updates sent one at a time, as Telegram sends them, to baton (and the
 * baseline), to the floor Worker's chat route (a new chat's least: a new object, one durable
 * INSERT before the ack, the model call, one more INSERT, the reply) and to the peer Worker
 * (scripts/bench/peer_telegram_worker.ts: ack at once, model call and sendMessage in waitUntil,
 * in-memory state), taking turns update by update. Measures from the start of the webhook POST
 * (a) the ack: its response read, and (b) the reply: the echoed sendMessage's arrival at the fake
 * Telegram. A new chat each time and one warm chat, alternating (then the warm chat alone once
 * the new ones are done). The next update leaves only once the reply has arrived.
 */
export async function telegram(rig: Rig, report: Report): Promise<void> {
  const targets: ChatTarget[] = [
    ...rig.batons.map((baton, i): ChatTarget => ({
      name: "baton",
      report: baton.report,
      send: (update) => rig.telegramUpdate(baton, update),
      chatBase: (i + 1) * 1_000_000,
      samples: { new: [], warm: [] },
    })),
    floorTarget(rig, report, 8_000_000),
    {
      name: "peer",
      report,
      send: (update) => rig.telegramUpdate("peer", update),
      chatBase: 9_000_000,
      samples: { new: [], warm: [] },
    },
  ];
  await alternateChats(targets, { warmUp: 5, fresh: 100, warm: 200 });

  const floor = targets.find((t) => t.name === "floor")!;
  const peer = targets[targets.length - 1];
  for (const chat of ["new", "warm"] as const) {
    const key = chat === "new" ? "tg_new_" : "tg_";
    const where = chat === "new" ? "new chat each time" : "warm chat";
    for (const t of targets) {
      for (const field of ["ack", "reply"] as const) {
        const what = field === "ack" ? "ack" : "webhook → reply";
        t.report.joined(`telegram, ${where}: ${what} p50 / p99 (ms), ${t.name}`, {
          [`${key}${field}_p50_ms_${t.name}`]: r2(chatMs(t.samples[chat], field, 0.5)),
          [`${key}${field}_p99_ms_${t.name}`]: r2(chatMs(t.samples[chat], field, 0.99)),
        });
      }
    }
    for (const t of targets) {
      if (t === peer || t === floor) continue;
      for (const field of ["ack", "reply"] as const) {
        t.report.ratio(
          `telegram, ${where}: ${field} p50 ratio baton / peer`,
          `${key}${field}_p50_ratio_baton_peer`,
          chatMs(t.samples[chat], field, 0.5) / chatMs(peer.samples[chat], field, 0.5),
        );
      }
    }
  }
  // The first message like the hundredth (issue 32): a new chat's p50 over a warm chat's, beside
  // the floor's (what a new object and its first durable write cost workerd itself), and baton's
  // over the floor's: the part of the new-chat price that is baton's own.
  for (const field of ["ack", "reply"] as const) {
    for (const t of targets) {
      if (t === floor) continue;
      t.report.ratio(
        `telegram: ${field} p50 ratio new chat / warm chat, ${t.name}`,
        `tg_${field}_p50_ratio_new_warm_${t.name}`,
        newWarmRatio(t, field),
      );
    }
    floor.report.ratio(
      `telegram: ${field} p50 ratio new chat / warm chat, floor (new object, durable write)`,
      `tg_${field}_p50_ratio_new_warm_floor`,
      newWarmRatio(floor, field),
    );
    for (const t of targets) {
      if (t.name !== "baton") continue;
      t.report.ratio(
        `telegram: ${field} p50 new / warm ratio, baton's over the floor's`,
        `tg_${field}_p50_ratio_new_warm_baton_over_floor`,
        newWarmRatio(t, field) / newWarmRatio(floor, field),
      );
      // The ratio falls as the warm chat slows: what a new chat adds, in ms, beside the floor's.
      t.report.joined(`telegram: ${field} p50 new − warm (ms), baton / floor`, {
        [`tg_${field}_p50_new_minus_warm_ms_baton`]: r2(_newMinusWarm(t, field)),
        [`tg_${field}_p50_new_minus_warm_ms_floor`]: r2(_newMinusWarm(floor, field)),
      });
    }
  }
  for (const t of targets) checkAnswered(rig, t, `tg_ok_${t.name}`);
}

/** A target's new-chat p50 over its warm chat's, of the ack or the reply. */
export function newWarmRatio(t: ChatTarget, field: "ack" | "reply"): number {
  return chatMs(t.samples.new, field, 0.5) / chatMs(t.samples.warm, field, 0.5);
}

/** What a new chat adds to a target's p50 over its warm chat's (ms). */
const _newMinusWarm = (t: ChatTarget, field: "ack" | "reply") =>
  chatMs(t.samples.new, field, 0.5) - chatMs(t.samples.warm, field, 0.5);

/**
 * Checks under `key` that every update to `t` was acknowledged and answered, and none twice
 * (its chats: `chatBase` and the 99,999 after it); other sends are counted (busy notices).
 */
export function checkAnswered(rig: Rig, t: ChatTarget, key: string): void {
  const sends = rig.telegram.sends.filter((s) =>
    s.chatId >= t.chatBase && s.chatId < t.chatBase + 100_000
  );
  const replies = sends.filter((s) => s.text.startsWith("tg "));
  const distinct = new Set(replies.map((s) => s.text)).size;
  const all = [...t.samples.new, ...t.samples.warm];
  const ok = all.filter((s) => s.ok).length;
  t.report.check(
    `telegram: replies OK / each update answered once / other sends (busy notices), ${t.name}`,
    key,
    ok === all.length && distinct === replies.length,
    `${ok}/${all.length} / ${replies.length - distinct} twice / ${sends.length - replies.length}`,
  );
}

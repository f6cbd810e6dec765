// Bench phase "memory": what MEMORY=on costs a Telegram turn (one read of the sender's record per turn), against MEMORY=off; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Baton, Rig } from "./rig.ts";
import type { TelegramSample } from "./telegram.ts";

/**
 * Telegram updates on one warm private chat each, taking turns between the rig's baton (memory
 * off) and a fresh one with `MEMORY=on`, where each turn first reads its sender's memory from their
 * access record (nothing remembered: the common case). Measures the ack and the reply.
 */
export async function memoryCost(rig: Rig, report: Report): Promise<void> {
  const WARM = 10, N = 200;
  await rig.onFresh(rig.baton, async (withMemory) => {
    const targets: { name: string; baton: Baton; chat: number; samples: TelegramSample[] }[] = [
      { name: "off", baton: rig.baton, chat: 7_100_001, samples: [] },
      { name: "on", baton: withMemory, chat: 7_100_002, samples: [] },
    ];
    let seq = 0;
    const send = (t: (typeof targets)[number]) => {
      const id = ++seq;
      return rig.telegramUpdate(t.baton, {
        chatId: t.chat,
        messageId: id,
        text: `tg memory ${t.name} ${id}`,
      });
    };
    // Warm-up replies count for the check too: a missed one was hidden there before (issue 32).
    const warmUp: TelegramSample[] = [];
    for (let i = 0; i < WARM; i++) for (const t of targets) warmUp.push(await send(t));
    for (let i = 0; i < N; i++) {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(i + k) % targets.length];
        t.samples.push(await send(t));
      }
    }
    const ms = (t: (typeof targets)[number], field: "ack" | "reply") =>
      pct(t.samples.map((s) => s[`${field}Ms`]).filter((x) => !Number.isNaN(x)), 0.5);
    const [off, on] = targets;
    report.joined("memory, warm chat: reply p50 (ms), MEMORY off / on (nothing remembered)", {
      memory_reply_p50_ms_off: r2(ms(off, "reply")),
      memory_reply_p50_ms_on: r2(ms(on, "reply")),
    });
    report.ratio(
      "memory: reply p50 ratio on / off",
      "memory_reply_p50_ratio",
      ms(on, "reply") / ms(off, "reply"),
    );
    const all = [...warmUp, ...targets.flatMap((t) => t.samples)];
    const answered = all.filter((s) => s.ok).length;
    report.check(
      "memory: every update answered (warm-up included)",
      "memory_ok",
      answered === all.length,
      `${answered}/${all.length}`,
    );
  }, { MEMORY: "on" });
}

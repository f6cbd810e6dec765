// Bench phase "access check": what one sender-record call per message costs a Telegram webhook, against no check; Deno.
import { pct } from "./client.ts";
import { r2, type Report } from "./report.ts";
import type { Baton, Rig } from "./rig.ts";
import type { TelegramSample } from "./telegram.ts";

/**
 * Telegram updates on one warm chat, taking turns between baton with `ACCESS_POLICY=open` (the
 * rig's, no access I/O) and a fresh baton where every sender costs one call to their own
 * `AccessDO` record (listed senders under `USER_TURNS_PER_HOUR`: the same call a paired sender
 * makes). Measures the ack and the reply from the start of the webhook POST.
 */
export async function accessCheck(rig: Rig, report: Report): Promise<void> {
  const WARM = 10, N = 200;
  const vars = {
    ACCESS_POLICY: "allowlist",
    ALLOWED_USERS: "telegram:*",
    USER_TURNS_PER_HOUR: "1000000",
  };
  await rig.onFresh(rig.baton, async (checked) => {
    const targets: {
      name: "open" | "checked";
      baton: Baton;
      chat: number;
      samples: TelegramSample[];
    }[] = [
      // Chats of this phase's own: 7,000,001 is a chat of the live phase on the same baton.
      { name: "open", baton: rig.baton, chat: 7_200_001, samples: [] },
      { name: "checked", baton: checked, chat: 7_200_002, samples: [] },
    ];
    let seq = 0;
    const send = (t: (typeof targets)[number]) => {
      const id = ++seq;
      return rig.telegramUpdate(t.baton, {
        chatId: t.chat,
        messageId: id,
        text: `tg access ${t.name} ${id}`,
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
    const [open, gated] = targets;
    for (const field of ["ack", "reply"] as const) {
      report.joined(`access check, warm chat: ${field} p50 (ms), open / one record call`, {
        [`access_${field}_p50_ms_open`]: r2(ms(open, field)),
        [`access_${field}_p50_ms_checked`]: r2(ms(gated, field)),
      });
      report.ratio(
        `access check: ${field} p50 ratio checked / open`,
        `access_${field}_p50_ratio`,
        ms(gated, field) / ms(open, field),
      );
    }
    const all = [...warmUp, ...targets.flatMap((t) => t.samples)];
    const answered = all.filter((s) => s.ok).length;
    report.check(
      "access check: every update answered (warm-up included)",
      "access_ok",
      answered === all.length,
      `${answered}/${all.length}`,
    );
  }, vars);
}

// The chaos verdict on parts in doubt: how each platform's fake saw a part cut off by a kill or a 5xx resolved, counted per kill; Deno.
import { PLATFORM_WAYS } from "./plan.ts";
import { LABELS } from "./report.ts";
import type { Tally } from "./tally.ts";
import type { ChaosObservation } from "./observation.ts";

/**
 * Parts in doubt as the platforms saw them resolved: a read-back of the chat (GitHub, Slack), a
 * send behind the resend note (Telegram, Discord follow-ups, WhatsApp, Twilio, Teams), an
 * @original edit repeated after one that had been answered or held (Discord), a send repeating
 * an idempotency key the platform had stored (LINE's retry key, Chat's request id). One that
 * follows a 5xx answer to the chat's last send was put in doubt by that answer; any other by the
 * kill before it. A part whose first send never left and that is resent as is shows nothing: not
 * counted. Returns the count per kill.
 */
export function partsInDoubt(obs: ChaosObservation, tally: Tally): number[] {
  const kills = obs.kills.map((k) => k.at);
  const perKill = kills.map(() => 0);
  for (const way of PLATFORM_WAYS) {
    const seen = new Set<string>();
    const lastSend = new Map<string | undefined, string>();
    const lastEdit = new Map<string | undefined, string>();
    const count = (chat: string | undefined, at: number) => {
      if (lastSend.get(chat)?.startsWith("5xx")) return tally.add(LABELS.inDoubt5xx, way);
      tally.add(LABELS.inDoubt, way);
      const before = kills.findLastIndex((k) => k < at);
      if (before >= 0) perKill[before]++;
    };
    for (const e of obs.fakeEvents[way] ?? []) {
      // Presence signals and key-set reads carry no part.
      if (e.quiet) continue;
      if (e.method === "GET") {
        // One look per part: GitHub's further pages of the same look are not counted again.
        const further = /(^|&)page=([2-9]|\d\d)/.test(e.query);
        if ((way === "github" || way === "slack") && !further) count(e.chat, e.at);
        continue;
      }
      if (e.marked && e.method === "POST") {
        // A resend answered 429 is sent again: one part, one count.
        const key = `${e.chat} ${e.text}`;
        if (!seen.has(key)) count(e.chat, e.at);
        seen.add(key);
      }
      if (e.repeat) {
        // The key again after its post was stored, perhaps more than once: one part, one count.
        const key = `repeat ${e.chat} ${e.length} ${e.text}`;
        if (!seen.has(key)) count(e.chat, e.at);
        seen.add(key);
      }
      if (e.method === "PATCH") {
        // The same edit again; a preview's edits differ from each other and from the reply's.
        const before = lastSend.get(e.chat);
        const repeated = lastEdit.get(e.chat) === `${e.length} ${e.text}`;
        if (repeated && (before === "ok" || before?.startsWith("held"))) count(e.chat, e.at);
        lastEdit.set(e.chat, `${e.length} ${e.text}`);
      }
      lastSend.set(e.chat, e.fate);
    }
  }
  return perKill;
}

// The chaos run's replays: good platform deliveries sent again long after they were answered, the signed body as it was under fresh delivery ids and signatures, before and after kills; then no reply may show twice; Deno.
import { type Answer, type ChaosLink, sendUntil } from "./api.ts";
import { CHAOS_MARKER, type ChaosMessage, type ChaosSession, isPlatformWay } from "./plan.ts";
import type { ChaosFigure } from "./report.ts";
import { fig, type Tally } from "./tally.ts";
import type { Repeat } from "./verify_platforms.ts";
import { type ChaosSecrets, inboundRequest } from "./ways.ts";
import type { ChaosObservation, ChaosReplay } from "./observation.ts";

/** Row labels of the replay checks. */
export const REPLAY_LABELS = {
  sent: "replays of signed deliveries under fresh delivery ids",
  repeated: "replies repeated by a replay",
} as const;

/**
 * A share `rate` of the platform messages, each replayed once or twice at moments drawn between a
 * second after it is due and half the span past the end of sending (while the last senders still
 * wait for answers) — so before, between and after the kills. From a stream of its own: a seed's messages, kills and faults stay as they were.
 */
export function planReplays(
  sessions: ChaosSession[],
  spanMs: number,
  rate: number,
  random: () => number,
): ChaosReplay[] {
  const replays: ChaosReplay[] = [];
  for (const m of sessions.flatMap((s) => s.messages)) {
    if (!isPlatformWay(m.session.way) || random() >= rate) continue;
    const copies = random() < 0.3 ? 2 : 1;
    for (let n = 1; n <= copies; n++) {
      const from = m.at + 1_000;
      replays.push({ message: m, n, at: Math.floor(from + random() * (1.5 * spanMs - from)) });
    }
  }
  return replays.sort((a, b) => a.at - b.at);
}

/**
 * A replay of `m`'s delivery: the body the platform signed, as it was, under what a sender gives
 * each delivery afresh — a new X-GitHub-Delivery (unsigned), X-Slack-Retry-Num with a new
 * timestamp and signature, a new Discord timestamp and signature, a new I-Twilio-Idempotency-Token,
 * a new Teams or Chat bearer token. Telegram's update id, WhatsApp's wamid and LINE's
 * webhookEventId are in the body, which stays as sent. `asNew` gives the replay a new signed
 * message id too: a new message to baton, which the checks must count as a repeat (a broken guard).
 */
export async function replayRequest(
  url: string,
  secrets: ChaosSecrets,
  replay: ChaosReplay,
  asNew = false,
): Promise<Request> {
  const m = replay.message;
  const sent = await inboundRequest(
    url,
    secrets,
    asNew ? { ...m, updateId: m.updateId + 7_000_000 } : m,
  );
  const headers = new Headers(sent.headers);
  switch (m.session.way) {
    case "github":
      headers.set("x-github-delivery", crypto.randomUUID());
      break;
    case "slack":
      headers.set("x-slack-retry-num", String(replay.n));
      headers.set("x-slack-retry-reason", "http_timeout");
      break;
    case "twilio":
      headers.set("i-twilio-idempotency-token", crypto.randomUUID());
      break;
  }
  return new Request(sent, { headers });
}

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends `replay` at its time (not before now), again on 429, 5xx or no answer, as a platform would. */
export async function sendReplay(
  link: ChaosLink,
  secrets: ChaosSecrets,
  replay: ChaosReplay,
  t0: number,
  asNew = false,
): Promise<void> {
  await _sleep(Math.max(0, t0 + replay.at - performance.now()));
  replay.sentAt = Date.now();
  const answer: Answer | null = await sendUntil(
    link,
    replay.message.session.way,
    () => replayRequest(link.url, secrets, replay, asNew),
  );
  replay.status = answer?.status;
}

/**
 * Replays sent, and each replayed message whose reply showed again unmarked (or both a reply and
 * a failure notice) after a replay went out, as the platform checks found (`repeated`), or whose
 * turn is twice in its transcript: a reply a replay repeated (must be 0).
 */
export function verifyReplays(
  obs: ChaosObservation,
  tally: Tally,
  repeated: ReadonlyMap<ChaosMessage, Repeat>,
): ChaosFigure[] {
  const replays = obs.replays ?? [];
  const platforms = obs.ways.filter(isPlatformWay);
  if (!platforms.length) return [];
  tally.row(REPLAY_LABELS.sent, false, platforms);
  tally.row(REPLAY_LABELS.repeated, true, platforms);
  for (const r of replays) tally.add(REPLAY_LABELS.sent, r.message.session.way);
  for (const m of new Set(replays.map((r) => r.message))) {
    const way = m.session.way;
    const first = Math.min(...replays.filter((r) => r.message === m).map((r) => r.sentAt ?? 0));
    const turns = (obs.transcripts.get(m.session.key) ?? []).filter((e) =>
      e.role === "user" && CHAOS_MARKER.exec(e.content)?.[0] === m.marker
    ).length;
    const repeat = repeated.get(m);
    const shown = repeat && repeat.at >= first ? repeat.how : undefined;
    if (shown !== undefined || turns > 1) {
      tally.add(
        REPLAY_LABELS.repeated,
        way,
        1,
        `${m.marker} (${way}) replayed: ${shown ?? `its turn ${turns} times in the transcript`}`,
      );
    }
  }
  const after = (kill: { at: number } | undefined) =>
    replays.filter((r) => kill && (r.sentAt ?? 0) > kill.at).length;
  return [
    fig(
      "replays answered 200 / sent after a kill / after the last kill",
      `${replays.filter((r) => r.status === 200).length} / ${after(obs.kills[0])} / ${
        after(obs.kills.at(-1))
      }`,
    ),
  ];
}

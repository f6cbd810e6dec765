// After a chaos run: wait for quiet, then read what a client would find (transcripts, run streams, dropped streams' ends); Deno.
import { type ChaosLink, readRunEvents, replayChat } from "./api.ts";
import type { SeenCompaction } from "./observation.ts";
import type { ChaosMessage, ChaosSession } from "./plan.ts";
import type { ChaosObservation, ReadEvent } from "./observation.ts";

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What `collectAfterRun` reads. */
export type AfterRun = Pick<
  ChaosObservation,
  "transcripts" | "compactions" | "omitted" | "locked" | "late"
>;

/**
 * Waits until every session is idle twice in a row (two minutes at most), then reads each
 * session's transcript, each run's whole event stream and state (a late subscriber), and asks
 * each dropped chat stream again (its Idempotency-Key) for how its turn ended.
 */
export async function collectAfterRun(
  link: ChaosLink,
  sessions: ChaosSession[],
  deadline: number,
): Promise<AfterRun> {
  const locked = new Set<string>();
  const quietBy = Math.min(deadline, Date.now() + 120_000);
  for (let calm = 0; calm < 2 && Date.now() < quietBy;) {
    locked.clear();
    for (const s of sessions) {
      const state = await sessionState(link, s.key);
      if (!state || state.running || state.queued > 0) locked.add(s.key);
    }
    calm = locked.size ? 0 : calm + 1;
    await _sleep(500);
  }
  const transcripts = new Map<string, { role: string; content: string }[]>();
  const compactions = new Map<string, SeenCompaction[]>();
  const omitted = new Map<string, number>();
  for (const s of sessions) {
    const state = await sessionState(link, s.key);
    transcripts.set(s.key, state?.messages ?? []);
    // The summaries that stand for its oldest messages (compaction.ts checks their ranges).
    if (state?.compactions?.length) compactions.set(s.key, state.compactions);
    if (state?.omitted) omitted.set(s.key, state.omitted);
  }
  const messages = sessions.flatMap((s) => s.messages);
  const late = new Map<ChaosMessage, { events: ReadEvent[]; status?: string; output?: string }>();
  await _pool(messages.filter((m) => m.runId), 8, async (m) => {
    const events: ReadEvent[] = [];
    // The run ended (its session is idle): its whole stream comes at once.
    await readRunEvents(link, m.runId!, events, Infinity, 15_000);
    let state: { status?: string; output?: string } = {};
    try {
      const res = await fetch(`${link.url}/v1/runs/${m.runId}`, {
        headers: { authorization: `Bearer ${link.apiKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      state = await res.json();
    } catch {
      // Left empty: the check reports the stream alone.
    }
    late.set(m, { events, status: state.status, output: state.output });
  });
  await _pool(
    messages.filter((m) => m.chatMode === "disconnect" && m.accepted),
    8,
    (m) => replayChat(link, m),
  );
  return { transcripts, compactions, omitted, locked, late };
}

/** GET /v1/sessions/{key}: running, queued and the transcript; null when it did not answer 200. */
export async function sessionState(
  link: ChaosLink,
  key: string,
): Promise<
  {
    running: boolean;
    queued: number;
    messages: { role: string; content: string }[];
    omitted?: number;
    compactions?: SeenCompaction[];
  } | null
> {
  try {
    const res = await fetch(`${link.url}/v1/sessions/${encodeURIComponent(key)}`, {
      headers: { authorization: `Bearer ${link.apiKey}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return null;
    }
    return await res.json();
  } catch {
    return null;
  }
}

/** Runs `fn` over `items`, `width` at a time. */
async function _pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/** What a failed run saw, for a person to read: messages, model calls, posts, each fake's requests. */
export async function dumpObservation(path: string, obs: ChaosObservation): Promise<void> {
  const messages = obs.sessions.flatMap((s) =>
    s.messages.map((m) => ({
      marker: m.marker,
      way: s.way,
      key: s.key,
      accepted: m.accepted,
      sentAt: m.sentAt,
      answeredAt: m.answeredAt,
      answers: m.answers,
      runId: m.runId,
      chatMode: s.way === "chat" ? m.chatMode : undefined,
      late: obs.late.get(m)?.events.map(_eventText),
      connections: m.connections.length ? m.connections.map((c) => c.map(_eventText)) : undefined,
    }))
  );
  const model = obs.modelRequests.map((r, i) => ({
    user: r.lastUserText.slice(0, 60),
    answered: obs.modelAnswered[i],
  }));
  const { kills, shown, fakeEvents } = obs;
  await Deno.writeTextFile(
    path,
    JSON.stringify({ kills, messages, model, shown, fakes: fakeEvents }, null, 1),
  );
}

/** An event as one readable string: its type, and its text or call where it has one. */
function _eventText(e: { type: string; data: Record<string, unknown> }): string {
  const detail = e.data.delta ?? e.data.call_id ?? e.data.output ?? "";
  return detail === "" ? e.type : `${e.type} ${JSON.stringify(detail).slice(0, 40)}`;
}

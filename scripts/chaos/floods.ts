// The chaos run's floods: an API tenant of its own fires `POST /v1/jobs/{id}/run` and chat calls far past API_TURNS_PER_MINUTE while kills land; then no minute may hold more of its turns than the quota; Deno.
import type { FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";
import type { ChaosLink } from "./api.ts";
import { sessionState } from "./collect.ts";
import type { ChaosSession } from "./plan.ts";
import { fig, type Tally } from "./tally.ts";
import type { ChaosFigure } from "./report.ts";
import type { ChaosFlood, FloodBurst } from "./observation.ts";

/** The flooding tenant: a `GATEWAY_API_KEYS` entry of its own, so its count is its alone. */
export const FLOOD_TENANT = { name: "flood", key: "chaos-flood-tenant-key" } as const;

/** Row labels of the flood checks (all in the runs column: the tenant's, whatever the route). */
export const FLOOD_LABELS = {
  calls: "flood calls by a tenant over its quota (/v1/jobs/{id}/run and chat)",
  refused: "of which refused 429 rate_limited",
  turns: "flood turns the model saw",
  beyond: "turns beyond the tenant's quota",
} as const;

/** `[tag:f<j>]`: what every flood turn's text carries (never a plan marker). */
const _FLOOD_TAG = /^f(\d+)$/;

/**
 * The flood of a plan: two sessions of the flood tenant, a burst past the quota once the run is
 * under way and two smaller ones within the same minute (all of it in one window, so however late
 * a turn starts, the tenant's turns can never rightly outnumber the quota). The quota is the
 * plan's own API turns (each chat and runs delivery, bad ones too, and the jobs) with room to
 * spare: the other tenant never meets it.
 */
export function planFlood(
  plan: { seed: number; sessions: ChaosSession[]; jobs: number; spanMs: number },
  random: () => number,
  unguarded = false,
): ChaosFlood {
  const { sessions, jobs, spanMs } = plan;
  const api = sessions.filter((s) => s.way === "chat" || s.way === "runs");
  const planned = jobs + api.reduce((n, s) => n + s.queue.length, 0);
  const quota = Math.ceil(planned * 1.25) + 10;
  const first = Math.floor((0.1 + 0.25 * random()) * spanMs);
  const within = Math.min(40_000, 0.5 * spanMs);
  const later = Math.ceil(quota / 4);
  const burst = (at: number, calls: number): FloodBurst => {
    const chats = Math.floor(calls / 3);
    return { at, runs: calls - chats, chats };
  };
  return {
    quota,
    unguarded,
    sessions: [0, 1].map((j) => ({ name: `flood-${plan.seed}-${j}`, tag: `f${j}` })),
    bursts: [
      burst(first, quota + 6),
      burst(first + Math.floor((0.3 + 0.2 * random()) * within), later),
      burst(first + Math.floor((0.7 + 0.3 * random()) * within), later),
    ],
    calls: [],
    turns: new Map(),
  };
}

/** The settings the flood needs: its tenant's key, and the quota (unless left out on purpose). */
export function floodVars(flood: ChaosFlood): Record<string, string> {
  return {
    GATEWAY_API_KEYS: `${FLOOD_TENANT.name}:${FLOOD_TENANT.key}`,
    ...(flood.unguarded ? {} : { API_TURNS_PER_MINUTE: String(flood.quota) }),
  };
}

/**
 * The fake model's answer to a flood turn (null: not one): at once, never failing, with a reply
 * no other turn has. A turn is known by what follows the last reply in its history — the same on
 * a retry and on a rerun after a kill, new for the next turn — so each is counted once, when the
 * model first sees it.
 */
export function floodStep(flood: ChaosFlood, req: FakeModelRequest): FakeModelStep | null {
  const tag = _FLOOD_TAG.exec(req.sessionTag);
  if (!tag) return null;
  // deno-lint-ignore no-explicit-any
  const messages = ((req.body?.messages ?? []) as any[]).filter((m) => m?.role !== "system");
  const lastReply = messages.findLastIndex((m) => m?.role === "assistant");
  const key = `${tag[0]} ${JSON.stringify(messages.slice(Math.max(0, lastReply)))}`;
  let turn = flood.turns.get(key);
  if (!turn) {
    const kind = /\bflood-chat-\d+\b/.test(req.lastUserText) ? "chat" : "run";
    turn = { at: Date.now(), kind, n: flood.turns.size };
    flood.turns.set(key, turn);
  }
  return { kind: "text", text: `flood reply ${tag[0]} t${turn.n}` };
}

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const _auth = { authorization: `Bearer ${FLOOD_TENANT.key}` };

/**
 * Creates the flood's jobs (one per session, due in a day: only the run calls start its turns),
 * then fires each burst at its time, every call at once. A call a kill cut off (no answer) is sent
 * again once baton is back, as a client would: a burst cut by a kill must still meet the quota
 * (seed 317989's first burst went out 91 ms before a kill; sent once, 78 of its 84 calls got no
 * answer, 57 turns ran in all, so none was due a 429, and the run proved nothing of the quota).
 */
export async function runFlood(link: ChaosLink, flood: ChaosFlood, t0: number): Promise<void> {
  for (const session of flood.sessions) session.jobId = await _createJob(link, session);
  let chat = 0;
  for (const burst of flood.bursts) {
    await _sleep(Math.max(0, t0 + burst.at - performance.now()));
    await link.up();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < burst.runs + burst.chats; i++) {
      const session = flood.sessions[i % flood.sessions.length];
      const kind = i < burst.runs ? "run" : "chat";
      const n = chat;
      if (kind === "chat") chat++;
      if (kind === "run" && !session.jobId) continue;
      calls.push(
        _call(
          link,
          () => kind === "run" ? _runRequest(link, session.jobId!) : _chatRequest(link, session, n),
        )
          .then(({ status, resent }) => void flood.calls.push({ kind, status, resent })),
      );
    }
    await Promise.all(calls);
  }
}

function _runRequest(link: ChaosLink, jobId: string): Request {
  return new Request(`${link.url}/v1/jobs/${jobId}/run`, { method: "POST", headers: _auth });
}

function _chatRequest(link: ChaosLink, session: { name: string; tag: string }, n: number): Request {
  return new Request(`${link.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      ..._auth,
      "content-type": "application/json",
      "x-session-id": session.name,
      "idempotency-key": `${session.name}-chat-${n}`,
    },
    body: JSON.stringify({
      model: "chaos",
      messages: [{ role: "user", content: `[tag:${session.tag}] flood-chat-${n}` }],
    }),
  });
}

/** How often a flood call with no answer (a kill) is sent again. */
const _RESENDS = 3;

/**
 * One call, sent again (a chat under its Idempotency-Key, counted once; a run call anew, counted
 * anew) while a kill cuts it off: its last status (0: no answer) and how often it was resent.
 */
async function _call(
  link: ChaosLink,
  build: () => Request,
): Promise<{ status: number; resent: number }> {
  for (let resent = 0;; resent++) {
    await link.up();
    link.sent("runs");
    try {
      const res = await fetch(build(), { signal: AbortSignal.timeout(60_000) });
      await res.body?.cancel();
      return { status: res.status, resent };
    } catch {
      if (resent >= _RESENDS || Date.now() >= link.deadline) return { status: 0, resent };
      await _sleep(200);
    }
  }
}

/** Finds the session's flood job or creates it (a POST a kill cut off is looked for first). */
async function _createJob(
  link: ChaosLink,
  session: { name: string; tag: string },
): Promise<string | undefined> {
  const prompt = `[tag:${session.tag}] flood-run`;
  for (let attempt = 0; attempt < 30 && Date.now() < link.deadline; attempt++) {
    await link.up();
    try {
      const list = await fetch(`${link.url}/v1/jobs?session=${session.name}`, {
        headers: _auth,
        signal: AbortSignal.timeout(10_000),
      });
      const found = list.status === 200
        ? ((await list.json()) as { data: { id: string; prompt: string }[] }).data
          .find((j) => j.prompt === prompt)
        : (await list.body?.cancel(), undefined);
      if (found) return found.id;
      const res = await fetch(`${link.url}/v1/jobs`, {
        method: "POST",
        headers: { ..._auth, "content-type": "application/json" },
        body: JSON.stringify({ session: session.name, prompt, schedule: { in: 86_400 } }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.json().catch(() => ({}));
      if (res.status === 201) return (body as { id: string }).id;
    } catch {
      // A kill: looked for again.
    }
    await _sleep(300);
  }
  return undefined;
}

/** After the run: the turns the flood tenant's transcripts hold (the admin key reads them). */
export async function collectFlood(link: ChaosLink, flood: ChaosFlood): Promise<void> {
  let turns = 0;
  for (const session of flood.sessions) {
    const state = await sessionState(link, `api.${FLOOD_TENANT.name}:${session.name}`);
    if (!state) return void (flood.transcribed = null);
    turns += state.messages.filter((m) => m.role === "user").length;
  }
  flood.transcribed = turns;
}

/** The most of `times` (ms) that fall in any one minute. */
export function mostInOneMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 60_000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/**
 * The flood's rows: calls, refusals, turns, and the turns any one minute holds beyond the quota
 * (must be 0); with its figures.
 */
export function verifyFlood(flood: ChaosFlood | undefined, tally: Tally): ChaosFigure[] {
  if (!flood) return [];
  tally.row(FLOOD_LABELS.calls, false, ["runs"]);
  tally.row(FLOOD_LABELS.refused, false, ["runs"]);
  tally.row(FLOOD_LABELS.turns, false, ["runs"]);
  tally.row(FLOOD_LABELS.beyond, true, ["runs"]);
  tally.add(FLOOD_LABELS.calls, "runs", flood.calls.length);
  tally.add(FLOOD_LABELS.refused, "runs", flood.calls.filter((c) => c.status === 429).length);
  const turns = [...flood.turns.values()];
  tally.add(FLOOD_LABELS.turns, "runs", turns.length);
  const most = mostInOneMinute(turns.map((t) => t.at));
  if (most > flood.quota) {
    const runs = turns.filter((t) => t.kind === "run").length;
    tally.add(
      FLOOD_LABELS.beyond,
      "runs",
      most - flood.quota,
      `the flood tenant got ${most} turns in one minute (${runs} of ${turns.length} from /run), over API_TURNS_PER_MINUTE=${flood.quota}${
        flood.unguarded ? " (baton ran without it, on purpose)" : ""
      }`,
    );
  }
  const answered = (status: number) => flood.calls.filter((c) => c.status === status).length;
  return [
    fig(
      "API_TURNS_PER_MINUTE (the flood tenant's quota) / most flood turns in a minute / in its transcripts",
      `${flood.quota} / ${most} / ${flood.transcribed ?? "–"}`,
    ),
    fig(
      "flood calls answered 202 or 200 / 429 / no answer; calls sent again after a kill cut them",
      `${answered(202) + answered(200)} / ${answered(429)} / ${answered(0)}; ${
        flood.calls.filter((c) => c.resent).length
      }`,
    ),
  ];
}

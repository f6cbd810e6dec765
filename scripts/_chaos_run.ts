// The chaos run: baton under `wrangler dev` fed over every way in at once, faulty fakes, SIGKILLs at seeded moments; Deno.
import { type FakeStep, startFakeLlm } from "../test/_support/fake_llm.ts";
import { type ChaosLink, isTurnFailure, sendChat, sendUntil, startRun } from "./_chaos_api.ts";
import {
  answerRunApprovals,
  APPROVAL_TIMEOUT_MS,
  askingStep,
  clickApprovals,
} from "./_chaos_approvals.ts";
import { collectAfterRun, dumpObservation } from "./_chaos_collect.ts";
import { collectFlood, floodStep, floodVars, planFlood, runFlood } from "./_chaos_floods.ts";
import { collectJobs, planJobs, scheduleJobs } from "./_chaos_jobs.ts";
import { type Sabotage, startChaosPlatforms } from "./_chaos_fakes.ts";
import {
  CHAOS_MARKER,
  CHAOS_WAYS,
  type ChaosBadDelivery,
  type ChaosMessage,
  type ChaosWay,
  isPlatformWay,
  modelReply,
  planChaos,
  PLATFORM_WAYS,
  type PlatformWay,
  seededRandom,
} from "./_chaos_plan.ts";
import { type ChaosReplay, planReplays, sendReplay } from "./_chaos_replays.ts";
import type { ChaosReport } from "./_chaos_report.ts";
import { startChaosRuntime } from "./_chaos_runtime.ts";
import type { ChaosObservation, WayCounts } from "./_chaos_tally.ts";
import { verifyChaos } from "./_chaos_verify.ts";
import { badRequest, chaosSecrets, inboundRequest, inboundVars } from "./_chaos_ways.ts";

export { type ChaosReport, formatChaosReport, formatChaosSummary } from "./_chaos_report.ts";

/** Size and faults of one chaos run. */
export interface ChaosOptions {
  /** Inbound messages in all, bad ones included (full run: 2,000). */
  messages: number;
  /** Sessions, spread round-robin over the ways in (full run: 60, five per way). */
  sessions: number;
  seed: number;
  /** SIGKILLs at moments drawn from the seed (default: two to five, drawn too). */
  kills?: number;
  /** One more kill while a fake platform holds a send open (default true). */
  holdKill?: boolean;
  /** Kill moments in ms from the start instead of drawn ones (the soak's steady kills). */
  killTimes?: number[];
  /** Ms over which messages are sent (default: about one a second per session, 15 s at least). */
  spanMs?: number;
  /** Share of good messages delivered two or three times (default 0.1). */
  duplicateRate?: number;
  /** Share of deliveries that are malformed, badly signed or unauthorised (default 0.05). */
  badRate?: number;
  /** Share of model calls that fail: 429 with Retry-After, 500, or a stall (default 0.2). */
  modelFailRate?: number;
  /** Share of platform sends and read-backs answered 429 (default 0.05). */
  platform429Rate?: number;
  /** Share of platform sends answered 5xx, half after storing the post (default 0.02). */
  platform5xxRate?: number;
  /** Share of messages with replies long enough to split, where they split (default 0.15). */
  longRate?: number;
  /** Share of Telegram and runs messages whose turn asks for approval (default 0.15). */
  approvalRate?: number;
  /** Runs sessions schedule one-off jobs due during the run (default true). */
  jobs?: boolean;
  /** A tenant of its own floods `/v1/jobs/{id}/run` and chat past API_TURNS_PER_MINUTE (default true; with runs). */
  flood?: boolean;
  /** Share of platform messages replayed once or twice under fresh delivery ids (default 0.1). */
  replayRate?: number;
  /**
   * Takes a guard away on purpose, to show its row counts what it lets through: "turn-quota"
   * starts baton without API_TURNS_PER_MINUTE (the flood is held to it all the same),
   * "replay-ids" gives each replay a new signed message id (a new message to baton).
   */
  unguarded?: ("turn-quota" | "replay-ids")[];
  /** baton's STREAM_REPLIES: chat replies previewed as they grow (default true, baton's default). */
  streamReplies?: boolean;
  /** baton's REPLY_IN_DOUBT (default: baton's own default). */
  replyInDoubt?: "resend" | "skip";
  ways?: ChaosWay[];
  /** The held send's platform, whether the fake stores it first, and when it is armed (default: drawn). */
  hold?: { way?: PlatformWay; stored?: boolean; atMs?: number };
  /** Breaks a fake on purpose, to show the checks catch what it hides (see `Sabotage`). */
  sabotage?: Sabotage;
  /** Keep the state, log and observation.json of a failed run (default true). */
  keepOnFailure?: boolean;
  /** The run gives up after this long (default 10 min, or the span plus 5 min). */
  deadlineMs?: number;
  /** Called every `sampleMs` (default 5 s) while messages are sent: the soak's samples. */
  onSample?: (sample: { at: number; rssKiB: number | null; sessions: ChaosMessage[][] }) => void;
  sampleMs?: number;
  /** Give every run a subscriber that stays to its end (the soak times every answer). */
  followEveryRun?: boolean;
  log?: (line: string) => void;
}

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the chaos scenario and verifies it; never throws for a failed check (see `ok`). */
export async function runChaos(input: ChaosOptions): Promise<ChaosReport> {
  const o = {
    duplicateRate: 0.1,
    badRate: 0.05,
    modelFailRate: 0.2,
    platform429Rate: 0.05,
    platform5xxRate: 0.02,
    longRate: 0.15,
    approvalRate: 0.15,
    jobs: true,
    flood: true,
    replayRate: 0.1,
    // About one message a second per session: the pace a session's sender keeps up with.
    spanMs: Math.max(15_000, Math.round(input.messages / Math.max(1, input.sessions) * 1000)),
    holdKill: true,
    ways: [...CHAOS_WAYS],
    // An option given as undefined keeps its default.
    ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as ChaosOptions,
  };
  const log = o.log ?? (() => {});
  const started = performance.now();
  const deadline = Date.now() + (o.deadlineMs ?? Math.max(10 * 60_000, o.spanMs + 5 * 60_000));
  const random = seededRandom(o.seed);
  const faults = seededRandom(o.seed ^ 0x5eed);
  const sessions = planChaos({ ...o, ways: o.ways }, random);
  const messages = sessions.flatMap((s) => s.messages);
  if (o.followEveryRun) {
    for (const m of messages) {
      if (m.session.way === "runs") m.subscribers = ["stay", ...m.subscribers];
    }
  }
  // Jobs from a stream of their own, so that the messages and kills of a seed stay as they were.
  const jobs = o.jobs ? planJobs(sessions, o.spanMs, seededRandom(o.seed ^ 0x70b5)) : [];
  // The flood and the replays from streams of their own too.
  const flood = o.flood && o.ways.includes("runs")
    ? planFlood(
      { seed: o.seed, sessions, jobs: jobs.length, spanMs: o.spanMs },
      seededRandom(o.seed ^ 0xf100d),
      o.unguarded?.includes("turn-quota"),
    )
    : undefined;
  const replays = planReplays(sessions, o.spanMs, o.replayRate, seededRandom(o.seed ^ 0x2e91a));
  const replaysOf = new Map<ChaosMessage, ChaosReplay[]>();
  for (const r of replays) replaysOf.set(r.message, [...(replaysOf.get(r.message) ?? []), r]);
  // The kill plan, drawn after the messages so that --kills does not change them.
  const kills = o.kills ?? 2 + Math.floor(random() * 4);
  const drawn = Array.from(
    { length: kills },
    () => Math.floor((0.08 + random() * 0.84) * o.spanMs),
  );
  const killTimes = o.killTimes ?? drawn.sort((a, b) => a - b);
  const held = {
    at: Math.floor((0.15 + random() * 0.7) * o.spanMs),
    way: Math.floor(random() * PLATFORM_WAYS.length),
    posted: random() < 0.5,
  };
  if (o.hold?.way) held.way = PLATFORM_WAYS.indexOf(o.hold.way);
  if (o.hold?.stored !== undefined) held.posted = o.hold.stored;
  if (o.hold?.atMs !== undefined) held.at = o.hold.atMs;
  // How long each start stays up at least before a drawn kill may land.
  const uptimes = killTimes.map(() => 2_500 + Math.floor(random() * 2_000));

  const model = await startFakeLlm();
  const modelAnswered: boolean[] = [];
  const injectedModel = { r429: 0, r500: 0, stall: 0 };
  model.script((req): FakeStep => {
    const floodAnswer = flood ? floodStep(flood, req) : null;
    if (floodAnswer) {
      modelAnswered.push(true);
      return floodAnswer;
    }
    const match = CHAOS_MARKER.exec(req.lastUserText);
    const text = modelReply(req.lastUserText);
    const asking = match ? askingStep(req, sessions[Number(match[1])], Number(match[2])) : null;
    if (!match) {
      modelAnswered.push(true);
      return { kind: "text", text };
    }
    const r = faults();
    const share = o.modelFailRate / 3;
    const slow = sessions[Number(match[1])]?.way === "chat" ? 150 + Math.floor(faults() * 400) : 0;
    modelAnswered.push(r >= 3 * share);
    if (r < share) return injectedModel.r429++, { kind: "status", status: 429, retryAfter: "1" };
    if (r < 2 * share) return injectedModel.r500++, { kind: "status", status: 500 };
    if (r < 3 * share) return injectedModel.stall++, { kind: "hold" };
    if (asking) return asking;
    // Chat streams answer slowly, so a client that drops its stream drops it mid-turn; every
    // eighth chat-platform reply is written over about 1.5 seconds, so its preview grows (drafts,
    // Discord's @original, a Slack message) and a kill can land mid-preview.
    const way = sessions[Number(match[1])]?.way;
    if (way && isPlatformWay(way) && Number(match[2]) % 8 === 1) {
      return { kind: "text", text, pieces: 6, pieceDelayMs: 250 };
    }
    return { kind: "text", text, ...(slow ? { delayMs: slow } : {}) };
  });
  const platforms = await startChaosPlatforms(
    {
      rate429: o.platform429Rate,
      rate5xx: o.platform5xxRate,
    },
    faults,
    o.sabotage,
  );
  const secrets = await chaosSecrets(platforms.keys);
  const base = new URL("../.tmp/", import.meta.url).pathname;
  await Deno.mkdir(base, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: base, prefix: "chaos-" });
  const vars: Record<string, string> = {
    LLM_BASE_URL: model.url,
    LLM_API_KEY: "sk-chaos",
    LLM_MAX_RETRIES: "2",
    TURN_TIMEOUT_MS: "3000",
    TURN_LEASE_MS: "2000",
    MAX_QUEUED: "1000",
    BUSY_ACK: "off",
    // Senders are not checked here: the chaos run measures the message path itself.
    ACCESS_POLICY: "open",
    ...inboundVars(secrets),
    ...platforms.vars,
    ...(o.replyInDoubt ? { REPLY_IN_DOUBT: o.replyInDoubt } : {}),
    ...(flood ? floodVars(flood) : {}),
    // The tool an asking message's model calls asks first; an unanswered question soon counts as denied.
    ...(o.streamReplies === false ? { STREAM_REPLIES: "off" } : {}),
    APPROVAL_TOOLS: "session_info",
    APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS),
  };
  const counts = Object.fromEntries(
    CHAOS_WAYS.map((w) => [w, { sent: 0, duplicatesSent: 0, badSent: 0, bad5xx: 0, good5xx: 0 }]),
  ) as Record<ChaosWay, WayCounts>;
  const problems: string[] = [];
  const heldSends: string[] = [];
  let openAtKills = 0;
  let keepDir = false;
  const runtime = await startChaosRuntime({
    dir,
    vars,
    pause: () => 300 + Math.floor(faults() * 700),
    clock: () => (performance.now() - t0) / 1000,
    log,
  });
  // Sending, kills and the hold are timed from here, once baton is up.
  const t0 = performance.now();
  const link: ChaosLink = {
    url: runtime.url,
    apiKey: secrets.apiKey,
    up: () => runtime.up(),
    deadline,
    sent: (way) => counts[way as ChaosWay].sent++,
  };
  try {
    log(
      `baton up at ${runtime.url} (state in ${dir}); kills at ${
        killTimes.map((t) => (t / 1000).toFixed(1)).join(", ")
      } s${
        o.holdKill
          ? `, a held ${PLATFORM_WAYS[held.way]} send at ${(held.at / 1000).toFixed(1)} s`
          : ""
      }`,
    );
    // Messages sent and not answered yet (a failure notice names no message: counted open).
    const shownMarkers = new Set<string>();
    let scanned = 0;
    const open = () => {
      for (; scanned < platforms.shown.length; scanned++) {
        const m = CHAOS_MARKER.exec(platforms.shown[scanned].text)?.[0];
        if (m) shownMarkers.add(m);
      }
      return messages.filter((m) =>
        m.sentAt !== undefined && !m.answers.length && !shownMarkers.has(m.marker) &&
        !m.connections.some((c) =>
          c.some((e) => /^run\.(completed|failed|cancelled)$/.test(e.type))
        )
      ).length;
    };
    // A drawn kill leaves each start a few seconds up first: a runtime killed as it comes up
    // does nothing, and the run would measure restarts only.
    const kill = async (reason: string, minUpMs = 0) => {
      // Another kill (the held one) may restart the runtime meanwhile: then wait again.
      for (let since = -1; minUpMs > 0 && since !== runtime.upSince();) {
        await runtime.up();
        since = runtime.upSince();
        await _sleep(Math.max(0, since + minUpMs - Date.now()));
        await runtime.up();
      }
      openAtKills += open();
      await runtime.killAndRestart(reason);
    };
    const killing = (async () => {
      for (const [i, t] of killTimes.entries()) {
        await _sleep(Math.max(0, t0 + t - performance.now()));
        await kill("random", uptimes[i]);
      }
    })();
    const holding = o.holdKill
      ? (async () => {
        await _sleep(Math.max(0, t0 + held.at - performance.now()));
        // The drawn platform first; if it sends nothing for a while, the next one.
        for (let i = 0; i < PLATFORM_WAYS.length; i++) {
          const way = PLATFORM_WAYS[(held.way + i) % PLATFORM_WAYS.length];
          if (!sessions.some((s) => s.way === way)) continue;
          const server = platforms.servers[way];
          const send = await Promise.race([
            server.holdNext(held.posted),
            _sleep(8_000).then(() => null),
          ]);
          if (!send) {
            server.disarm();
            continue;
          }
          await _sleep(50 + Math.floor(faults() * 300));
          heldSends.push(`${way} ${send.posted ? "stored" : "not stored"}`);
          await kill(`held ${way} send`);
          return;
        }
        heldSends.push("no platform sent anything to hold");
      })()
      : Promise.resolve();
    const sampling = o.onSample
      ? setInterval(
        () =>
          o.onSample!({
            at: performance.now() - t0,
            rssKiB: runtime.workerdRssKiB(),
            sessions: sessions.map((s) => s.messages),
          }),
        o.sampleMs ?? 5_000,
      )
      : undefined;

    const background: Promise<void>[] = [];
    const deliverOnce = async (m: ChaosMessage, first: boolean): Promise<void> => {
      const way = m.session.way;
      m.sentAt ??= Date.now();
      if (way === "chat") return await sendChat(link, m, faults);
      if (way === "runs") {
        await startRun(link, m, first ? background : []);
        if (first && m.approval && m.runId) background.push(answerRunApprovals(link, m));
        return;
      }
      if (first && m.approval && way === "telegram") {
        background.push(clickApprovals(link, m, platforms.shown, secrets.telegram));
      }
      let tries = 0; // a copy, or the first sent again, is a redelivery
      const build = () => inboundRequest(link.url, secrets, m, !first || tries++ > 0);
      const answer = await sendUntil(link, way, build, (a) => {
        if (a.status === 429) return true;
        if (a.status < 500 || (way === "webhook" && isTurnFailure(a))) return false;
        if (a.status !== 503) counts[way].good5xx++;
        return true;
      });
      if (!answer) return;
      if (isPlatformWay(way)) {
        if (answer.status === 200) m.accepted = true;
        else problems.push(`${m.marker}: ${way} delivery answered ${answer.status}`);
        return;
      }
      const body = answer.body as { reply?: string; error?: { type?: string } };
      if (answer.status === 200 || isTurnFailure(answer)) {
        m.accepted = true;
        m.answeredAt ??= Date.now();
        m.answers.push({ status: answer.status, reply: body.reply, error: body.error?.type });
      } else problems.push(`${m.marker}: webhook answered ${answer.status}`);
    };
    const deliver = async (m: ChaosMessage) => {
      const copies = m.duplicate?.mode === "concurrent" ? 1 + m.duplicate.copies : 1;
      counts[m.session.way].duplicatesSent += copies - 1;
      await Promise.all(Array.from({ length: copies }, (_, i) => deliverOnce(m, i === 0)));
      // Replays go out once the message was taken, at their own times.
      const asNew = o.unguarded?.includes("replay-ids");
      for (const r of m.accepted ? replaysOf.get(m) ?? [] : []) {
        background.push(sendReplay(link, secrets, r, t0, asNew));
      }
      if (m.duplicate?.mode === "later") {
        const extra = m.duplicate.copies;
        counts[m.session.way].duplicatesSent += extra;
        background.push((async () => {
          for (let i = 0; i < extra; i++) {
            await _sleep(300 + Math.floor(faults() * 3_000));
            await deliverOnce(m, false);
          }
        })());
      }
    };
    const deliverBad = async (bad: ChaosBadDelivery) => {
      const way = bad.session.way;
      counts[way].badSent++;
      const answer = await sendUntil(
        link,
        way,
        () => badRequest(link.url, secrets, bad),
        () => false,
      );
      bad.status = answer?.status;
      if (answer && answer.status >= 500) {
        counts[way].bad5xx++;
        problems.push(`${bad.marker} (${way}, ${bad.what}): answered ${answer.status}`);
      }
    };
    const scheduling = scheduleJobs(link, jobs, t0);
    const flooding = flood ? runFlood(link, flood, t0) : Promise.resolve();
    await Promise.all(sessions.map(async (session) => {
      for (const item of session.queue) {
        await _sleep(Math.max(0, t0 + item.at - performance.now()));
        if ("k" in item) await deliver(item);
        else await deliverBad(item);
      }
    }));
    log(`every message sent after ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await Promise.all([killing, holding, scheduling, flooding]);
    await Promise.all(background);
    if (sampling !== undefined) clearInterval(sampling);
    await runtime.up();
    log(`all deliveries answered after ${((performance.now() - started) / 1000).toFixed(0)} s`);

    const after = await collectAfterRun(link, sessions, deadline);
    await collectJobs(link, jobs);
    if (flood) await collectFlood(link, flood);

    // Stopped gently first: the log's last lines (parts in doubt resolved late) are flushed.
    await runtime.stop();
    const observation: ChaosObservation = {
      seed: o.seed,
      ways: o.ways,
      sessions,
      modelRequests: model.requests,
      modelAnswered,
      injectedModel,
      shown: platforms.shown,
      faults: Object.fromEntries(
        PLATFORM_WAYS.map((w) => [w, platforms.servers[w].faults]),
      ) as ChaosObservation["faults"],
      lookups: platforms.lookups,
      fakeEvents: Object.fromEntries(PLATFORM_WAYS.map((w) => [w, platforms.servers[w].events])),
      ...after,
      counts,
      jobs,
      flood,
      replays: replays.filter((r) => r.sentAt !== undefined),
      kills: runtime.kills,
      openAtKills,
      held: heldSends,
      problems,
      seconds: (performance.now() - started) / 1000,
    };
    const report = verifyChaos(observation);
    keepDir = !report.ok && o.keepOnFailure !== false;
    if (keepDir) {
      await dumpObservation(`${dir}/observation.json`, observation);
      report.problems.push(`state, wrangler log and observation.json kept in ${dir}`);
    }
    return report;
  } finally {
    await runtime.stop();
    await model.close();
    await platforms.close();
    if (!keepDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

// The chaos run: baton under `wrangler dev` fed over every way in at once, faulty fakes, SIGKILLs at seeded moments; Deno.
import { startFakeModel } from "../../lib/testing/fake_model.ts";
import { type ChaosLink, isTurnFailure, sendChat, sendUntil, startRun } from "./api.ts";
import { answerRunApprovals, APPROVAL_TIMEOUT_MS, clickApprovals } from "./approvals.ts";
import { collectAfterRun, dumpObservation } from "./collect.ts";
import { collectFlood, floodVars, planFlood, runFlood } from "./floods.ts";
import { collectJobs, planJobs, scheduleJobs } from "./jobs.ts";
import { startChaosPlatforms } from "./fakes.ts";
import { chaosModel } from "./model.ts";
import { type ChaosOptions, withDefaults } from "./options.ts";
import {
  CHAOS_MARKER,
  CHAOS_WAYS,
  type ChaosBadDelivery,
  type ChaosMessage,
  type ChaosWay,
  isPlatformWay,
  planChaos,
  PLATFORM_WAYS,
  seededRandom,
} from "./plan.ts";
import { planReplays, sendReplay } from "./replays.ts";
import { CHAOS_CONTEXT_TOKENS, planCompaction } from "./compaction.ts";
import { planSteers } from "./steer.ts";
import { planMedia } from "./media.ts";
import { isUpload, planFilesOut } from "./files_out.ts";
import type { ChaosReport } from "./report.ts";
import { startChaosRuntime } from "./runtime.ts";
import { verifyChaos } from "./verify.ts";
import { badRequest, chaosSecrets, inboundRequest, inboundVars } from "./ways.ts";
import type { ChaosObservation, ChaosReplay, WayCounts } from "./observation.ts";

export { type ChaosReport, formatChaosReport, formatChaosSummary } from "./report.ts";

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the chaos scenario and verifies it; never throws for a failed check (see `ok`). */
export async function runChaos(input: ChaosOptions): Promise<ChaosReport> {
  const o = withDefaults(input);
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
  const media = o.mediaRate > 0
    ? planMedia(sessions, o.mediaRate, seededRandom(o.seed ^ 0x3ed1a))
    : undefined;
  // A share of sessions long enough to compact, and of busy messages sent as `/steer`: their own streams.
  planCompaction(sessions, seededRandom(o.seed ^ 0xc0ac7));
  const steers = planSteers(sessions, seededRandom(o.seed ^ 0x57ee2));
  // Replies that carry a file (files_out.ts): a stream of their own too.
  const filesOut = o.filesOutRate > 0
    ? planFilesOut(sessions, o.filesOutRate, seededRandom(o.seed ^ 0xf11e5), steers)
    : undefined;
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

  const model = await startFakeModel();
  const modelFaults = chaosModel({
    flood,
    sessions,
    faults,
    modelFailRate: o.modelFailRate,
    media,
    steers,
    filesOut,
  });
  model.script(modelFaults.step);
  const platforms = await startChaosPlatforms(
    {
      rate429: o.platform429Rate,
      rate5xx: o.platform5xxRate,
    },
    faults,
    o.sabotage,
    media,
    filesOut,
  );
  const secrets = await chaosSecrets(platforms.keys);
  const base = new URL("../../.tmp/", import.meta.url).pathname;
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
    // Small, so that padded sessions and long replies compact while kills land (compaction.ts).
    CONTEXT_TOKENS: String(CHAOS_CONTEXT_TOKENS),
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
            server.holdNext(held.posted, o.hold?.upload ? isUpload : undefined),
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
      modelAnswered: modelFaults.answered,
      injectedModel: modelFaults.injected,
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
      media,
      filesOut,
      steers,
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
